#!/bin/busybox sh
# PID 1 of the guest's initramfs (busybox only). Builds the guest's root — the host's / read-only
# through hostfs as the lower layer of an overlay whose upper layer is a tmpfs, so every host binary
# runs unchanged and guest writes vanish at poweroff — mounts cgroup2 at /sys/fs/cgroup, then switches
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
# cgroup v2 only, as systemd mounts it (nsdelegate, memory_recursiveprot).
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /newroot/sys/fs/cgroup || fail "mount cgroup2"
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
