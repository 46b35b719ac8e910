#!/bin/busybox sh
# PID 1 of the guest's initramfs (busybox only). Builds the guest's root — the host's / read-only
# through hostfs as the lower layer of an overlay whose upper layer is a tmpfs, so every host binary
# runs unchanged and guest writes vanish at poweroff — mounts cgroup2 at /sys/fs/cgroup (or, with
# CGROUP_V1=1 in the config, the v1 hybrid layout), then switches
# into it and runs stage2.sh. The run directory (config, command, output, exit code) is shared with the
# host read-write at its host path; it is named on the kernel command line as v2guest.run=DIR.
export PATH=/bin
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
fail() { echo "v2-guest init: FAILED: $*"; poweroff -f; sleep 10; }

for a in $(cat /proc/cmdline); do case $a in v2guest.run=*) RUNDIR=${a#v2guest.run=} ;; esac; done
[ -n "$RUNDIR" ] || fail "no v2guest.run= on the kernel command line"
mount -t hostfs -o "$RUNDIR" none /run-dir || fail "mount the run dir $RUNDIR"
. /run-dir/config
read UPTIME _ </proc/uptime
echo "init $UPTIME" >/run-dir/times

mount -t hostfs -o ro,/ none /host || fail "mount the host root"
grep -qw overlay /proc/filesystems || [ -z "$OVERLAY_KO" ] || insmod "/host$OVERLAY_KO" || fail "insmod $OVERLAY_KO"
mount -t tmpfs -o mode=755 tmpfs /upper
mkdir /upper/u /upper/w
mount -t overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w overlay /newroot || fail "overlay root"

mkdir -p /newroot/.v2-guest
cp /bin/busybox /stage2.sh /newroot/.v2-guest/
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
if [ "${CGROUP_V1:-0}" = 1 ]; then
  # --cgroup-v1: the hybrid layout systemd mounts with systemd.unified_cgroup_hierarchy=0 (Debian 11 and
  # older): each v1 controller under a tmpfs (cpu and cpuacct together), the name=systemd hierarchy, and
  # cgroup2 without controllers at unified/.
  mount -t tmpfs -o mode=755 tmpfs /newroot/sys/fs/cgroup || fail "tmpfs for cgroup v1"
  for c in $(awk 'NR > 1 && $4 == 1 { print $1 }' /proc/cgroups); do
    case $c in cpu|cpuacct) d=cpu,cpuacct ;; net_cls|net_prio) d=net_cls,net_prio ;; *) d=$c ;; esac
    [ -d "/newroot/sys/fs/cgroup/$d" ] && continue
    mkdir "/newroot/sys/fs/cgroup/$d" && mount -t cgroup -o "$d" cgroup "/newroot/sys/fs/cgroup/$d" || fail "mount cgroup v1 $d"
  done
  ln -s cpu,cpuacct /newroot/sys/fs/cgroup/cpu; ln -s cpu,cpuacct /newroot/sys/fs/cgroup/cpuacct
  [ -d /newroot/sys/fs/cgroup/net_cls,net_prio ] && ln -s net_cls,net_prio /newroot/sys/fs/cgroup/net_cls
  mkdir /newroot/sys/fs/cgroup/unified /newroot/sys/fs/cgroup/systemd
  mount -t cgroup2 -o nsdelegate cgroup2 /newroot/sys/fs/cgroup/unified || fail "mount cgroup2 at unified"
  mount -t cgroup -o none,name=systemd,xattr cgroup /newroot/sys/fs/cgroup/systemd || fail "mount the name=systemd hierarchy"
else
  # cgroup v2 only, as systemd mounts it (nsdelegate, memory_recursiveprot).
  mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /newroot/sys/fs/cgroup || fail "mount cgroup2"
fi
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o mode=755 tmpfs /newroot/run
mkdir -p "/newroot$RUNDIR"
mount --move /run-dir "/newroot$RUNDIR"
IFS=:
for d in $RW_DIRS; do
  mkdir -p "/newroot$d" && mount -t hostfs -o "$d" none "/newroot$d" || fail "share $d read-write"
done
unset IFS

cd /newroot
mount --move . /
export RUNDIR
exec chroot . /.v2-guest/busybox sh /.v2-guest/stage2.sh
