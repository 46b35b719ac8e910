# PID 1 inside the guest's overlay root (run by init.sh with the initramfs busybox). Finishes the
# mounts, enables every cgroup v2 controller at the root, then runs the command — directly, or with
# --systemd as a oneshot unit under systemd as PID 1 (D-Bus and logind up) — and powers off.
# The command's stdout/stderr go to files in the run directory, which the host streams; its exit code
# goes to $RUNDIR/rc.
BB=/.v2-guest/busybox
$BB mkdir -p /dev/pts /dev/shm
$BB mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
$BB mount -t tmpfs -o mode=1777 tmpfs /dev/shm
[ -e /dev/fd ] || $BB ln -s /proc/self/fd /dev/fd
$BB hostname v2-guest
$BB ip link set lo up 2>/dev/null
for c in $($BB cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null); do
  echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
done
read UPTIME _ </proc/uptime
echo "command $UPTIME" >>"$RUNDIR/times"

# Heartbeat: the guest's uptime into $RUNDIR/heartbeat every 2 s, so the host (v2-guest.sh's stall
# watchdog) tells a frozen guest (an emulator livelock: no guest timer fires) from a long quiet test.
# Shell builtins only (read -t on a fifo that never delivers is the sleep): no fork, so pid pressure
# inside the guest cannot stop it; out of the OOM killer's reach; in the root cgroup, outside every
# test's cgroup. It outlives the exec of systemd below (a child of PID 1 from then on).
$BB mkfifo /run/.v2-guest-heartbeat
(
  echo -1000 >/proc/self/oom_score_adj
  exec 3<>/run/.v2-guest-heartbeat
  while :; do
    read up _ </proc/uptime
    echo "$up" >"$RUNDIR/heartbeat"
    read -t 2 _ <&3
  done
) </dev/null >/dev/null 2>&1 &

if [ -f "$RUNDIR/systemd" ]; then
  $BB mkdir -p /etc/systemd/system
  $BB cat >/etc/systemd/system/v2-guest.target <<EOT
[Unit]
Description=v2-guest: run one command, then power off
Requires=v2-guest-command.service dbus.service systemd-logind.service
After=v2-guest-command.service
EOT
  $BB cat >/etc/systemd/system/v2-guest-command.service <<EOT
[Unit]
After=dbus.service systemd-logind.service
[Service]
Type=oneshot
ExecStart=/bin/bash -c '/bin/bash $RUNDIR/command.sh </dev/null >$RUNDIR/stdout 2>$RUNDIR/stderr; echo \$? >$RUNDIR/rc; sync; systemctl poweroff --force --force'
EOT
  exec /lib/systemd/systemd --unit=v2-guest.target --log-target=console
fi

/bin/bash "$RUNDIR/command.sh" </dev/null >"$RUNDIR/stdout" 2>"$RUNDIR/stderr"
echo $? >"$RUNDIR/rc"
read UPTIME _ </proc/uptime
echo "end $UPTIME" >>"$RUNDIR/times"
$BB sync
$BB poweroff -f
