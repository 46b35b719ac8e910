#!/usr/bin/env bash
# Builds (once) the User-mode Linux kernel the cgroup v2 test guest runs on, and prints its path.
#
# Why UML: this host's memory controller is bound to cgroup v1 and must stay so, and its /dev/kvm is a
# PVM hypervisor (kvm_pvm) that boots only PVM guest kernels, so qemu cannot run a stock kernel. A UML
# kernel is an ordinary host process: no /dev/kvm, no host cgroup touched.
# Why build it: Debian's prebuilt /usr/bin/linux.uml (package user-mode-linux) has CONFIG_PSI off, so
# there are no memory.pressure files. We build Debian's linux-source-6.1 with Debian's own UML config
# (shipped in user-mode-linux), modules folded in (=m → off, the few we need =y) and PSI on.
#
# Cost: ~6 min on 2 free CPUs (longer on a shared machine: the build runs under `nice -n 19`), a 9 MB
# stripped binary. Cached under $BUNLET_UML_CACHE (default /var/tmp/bunlet-uml) in a file named by a hash
# of this recipe (not of the source package version: a Debian point release alone does not rebuild;
# the version built is recorded beside it in <kernel>.version).
#
#   scripts/host/uml-kernel.sh          # build if missing, print the kernel path
#   scripts/host/uml-kernel.sh --path   # print the path it would have, build nothing (exit 1 if absent)
# Packages from Debian (apt, installed if missing): gcc make flex bison bc libc6-dev xz-utils; the
# source packages linux-source-6.1 and user-mode-linux are downloaded and unpacked, not installed.
set -euo pipefail

CACHE="${BUNLET_UML_CACHE:-/var/tmp/bunlet-uml}"
SRC_PKG=linux-source-6.1
CFG_PKG=user-mode-linux
# Bump when the config edits below change in a way the hash of this file would not show (it always does).
RECIPE_VERSION=2

say() { echo "uml-kernel: $*" >&2; }

have_apt_lists() { ls /var/lib/apt/lists/ 2>/dev/null | grep -q '_Packages$'; }

apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  have_apt_lists || apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

kernel_path() {
  local key
  key="$( { echo "$RECIPE_VERSION $SRC_PKG $CFG_PKG"
            sed -n '/^configure()/,/^build()/p' "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-12)" # the config and every patch
  echo "$CACHE/linux-uml-psi-$key"
}

# The kernel config: Debian's UML config, modules off, and what the guest needs built in.
configure() {
  patch_xstate
  patch_sigstack
  patch_hz
  zcat "$1" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' >.config
  # PSI: memory.pressure and triggers. OVERLAY_FS: the guest's root (host / read-only + tmpfs upper).
  # VETH/BRIDGE/TUN: container networking. Debug info and LSMs off: build time and size.
  ./scripts/config --enable PSI --disable PSI_DEFAULT_DISABLED \
    --enable OVERLAY_FS --enable VETH --enable BRIDGE --enable TUN \
    --enable CGROUP_MISC --enable TMPFS_XATTR --enable TMPFS_POSIX_ACL \
    --disable UML_NET_VDE --disable UML_NET_PCAP \
    --disable DEBUG_INFO --enable DEBUG_INFO_NONE --disable DEBUG_INFO_REDUCED --disable DEBUG_INFO_COMPRESSED \
    --disable SECURITY_SELINUX --disable SECURITY_APPARMOR --disable SECURITY_SMACK \
    --disable SECURITY_TOMOYO --disable SECURITY_LOADPIN --set-str LSM "yama,integrity" \
    --disable RAID6_PQ_BENCHMARK --disable BTRFS_FS --enable CRYPTO_MANAGER_DISABLE_TESTS
  ./scripts/config --set-val KERNEL_STACK_ORDER 3 # thread_info (on the stack) holds the larger xstate buffer
  # RT_GROUP_SCHED off, as in Debian's amd64 kernels (config.amd64_none_amd64 of linux-config-6.1; the UML
  # config has it on): with it, a thread in any cgroup but the root with the cpu controller on (every
  # service's, on a cgroup v2 host with kubepods) cannot take a real-time policy (EPERM), and bunlet's
  # notifier threads run SCHED_RR where they can (src/kernel/thread-priority.ts).
  ./scripts/config --disable RT_GROUP_SCHED
  make ARCH=um olddefconfig >/dev/null
  local opt
  for opt in PSI OVERLAY_FS CGROUPS MEMCG CGROUP_PIDS; do
    grep -q "^CONFIG_$opt=y" .config || { say "CONFIG_$opt did not stick"; exit 1; }
  done
  grep -q '^CONFIG_HZ=250$' .config || { say "CONFIG_HZ=250 did not stick"; exit 1; }
  ! grep -q '^CONFIG_RT_GROUP_SCHED=y' .config || { say "CONFIG_RT_GROUP_SCHED stayed on"; exit 1; }
}

# Hosts whose XSAVE area is larger than UML 6.1's fixed 2696 bytes (AMX: 11008) refuse its
# PTRACE_SETREGSET NT_X86_XSTATE (the host wants exactly its own size: EFAULT), and the guest's init dies
# at once ("ptrace set fp regs failed, errno = 14"). Later kernels
# size the buffer from the host; here: a 16 KiB buffer, and the size the host reports at the first
# PTRACE_GETREGSET used for every get and set.
patch_xstate() {
  local uo=arch/x86/um/user-offsets.c rg=arch/x86/um/os-Linux/registers.c
  grep -q 'DEFINE_LONGS(HOST_FP_SIZE, 2696);' "$uo" || { say "xstate patch: $uo changed"; exit 1; }
  sed -i 's/DEFINE_LONGS(HOST_FP_SIZE, 2696);/DEFINE_LONGS(HOST_FP_SIZE, 16384);/' "$uo"
  grep -c 'iov.iov_len = FP_SIZE \* sizeof(unsigned long);' "$rg" | grep -qx 3 || { say "xstate patch: $rg changed"; exit 1; }
  sed -i -e 's/^int have_xstate_support;/int have_xstate_support;\nstatic unsigned long host_xstate_bytes = FP_SIZE * sizeof(unsigned long);/' \
    -e '/ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) == 0)/{s/== 0)/== 0) {/;n;s/have_xstate_support = 1;/have_xstate_support = 1; host_xstate_bytes = iov.iov_len; }/}' \
    "$rg"
  # In save/restore (not the probe, which must offer the whole buffer): the host's size.
  awk '/^void arch_init_registers/ {probe=1} { if (!probe) sub(/iov.iov_len = FP_SIZE \* sizeof\(unsigned long\);/, "iov.iov_len = host_xstate_bytes;"); print }' "$rg" >"$rg.new" && mv "$rg.new" "$rg"
  grep -q 'host_xstate_bytes = iov.iov_len; }' "$rg" && [ "$(grep -c 'iov.iov_len = host_xstate_bytes;' "$rg")" = 2 ] || { say "xstate patch did not apply"; exit 1; }
}

# With the host-sized XSAVE buffer, struct uml_pt_regs is 16 KiB, and UML's host signal handlers (the
# guest's interrupts and kernel-mode faults) each put one on the IRQ stack (32 KiB, 16.4 KiB of it the
# thread_info copy) or on a task's kernel stack: the copy ran off the stack's bottom into the memory
# below. Under load (nested interrupts) the guest froze for good: UML's main process took SIGSEGV at
# 0x4880 ~40,000 times a second, no syscall between (strace), the guest's clock stopped (an AMX host,
# the v2 chaos suite). The handlers only use gp, faultinfo and is_user: fp becomes the struct's last
# member and their on-stack copy stops where it starts (~270 bytes instead of 16 KiB).
patch_sigstack() {
  patch -p1 --forward --no-backup-if-mismatch --quiet <<'PATCH' || { say "sigstack patch did not apply"; exit 1; }
--- a/arch/x86/um/shared/sysdep/ptrace.h
+++ b/arch/x86/um/shared/sysdep/ptrace.h
@@ -58,12 +58,16 @@
 
 struct uml_pt_regs {
 	unsigned long gp[MAX_REG_NR];
-	unsigned long fp[MAX_FP_NR];
 	struct faultinfo faultinfo;
 	long syscall;
 	int is_user;
+	/* Last: the host signal handlers keep a copy without it (UML_PT_REGS_NO_FP) on their stack. */
+	unsigned long fp[MAX_FP_NR];
 };
 
+/* The bytes of a struct uml_pt_regs before fp: what a handler's on-stack copy holds. */
+#define UML_PT_REGS_NO_FP __builtin_offsetof(struct uml_pt_regs, fp)
+
 #define EMPTY_UML_PT_REGS { }
 
 #define UPT_SYSCALL_NR(r) ((r)->syscall)
--- a/arch/um/os-Linux/signal.c
+++ b/arch/um/os-Linux/signal.c
@@ -31,23 +31,33 @@
 	[SIGIO]		= sigio_handler,
 };
 
+/*
+ * struct uml_pt_regs holds the host's XSAVE buffer (16 KiB for AMX hosts): more than the IRQ stack
+ * these handlers run on has free, so a whole on-stack copy ran off its bottom and corrupted what lies
+ * below (the guest livelocked in a SIGSEGV loop). The handlers only fill and read gp, faultinfo and
+ * is_user, so their copy ends where fp starts (fp is the struct's last member).
+ */
+#define SIG_REGS(name) \
+	unsigned long name##_bytes[(UML_PT_REGS_NO_FP + sizeof(long) - 1) / sizeof(long)]; \
+	struct uml_pt_regs *name = (struct uml_pt_regs *) name##_bytes
+
 static void sig_handler_common(int sig, struct siginfo *si, mcontext_t *mc)
 {
-	struct uml_pt_regs r;
+	SIG_REGS(r);
 	int save_errno = errno;
 
-	r.is_user = 0;
+	r->is_user = 0;
 	if (sig == SIGSEGV) {
 		/* For segfaults, we want the data from the sigcontext. */
-		get_regs_from_mc(&r, mc);
-		GET_FAULTINFO_FROM_MC(r.faultinfo, mc);
+		get_regs_from_mc(r, mc);
+		GET_FAULTINFO_FROM_MC(r->faultinfo, mc);
 	}
 
 	/* enable signals if sig isn't IRQ signal */
 	if ((sig != SIGIO) && (sig != SIGWINCH))
 		unblock_signals_trace();
 
-	(*sig_info[sig])(sig, si, &r);
+	(*sig_info[sig])(sig, si, r);
 
 	errno = save_errno;
 }
@@ -111,13 +121,12 @@
 
 static void timer_real_alarm_handler(mcontext_t *mc)
 {
-	struct uml_pt_regs regs;
+	SIG_REGS(regs);
 
+	memset(regs_bytes, 0, sizeof(regs_bytes));
 	if (mc != NULL)
-		get_regs_from_mc(&regs, mc);
-	else
-		memset(&regs, 0, sizeof(regs));
-	timer_handler(SIGALRM, NULL, &regs);
+		get_regs_from_mc(regs, mc);
+	timer_handler(SIGALRM, NULL, regs);
 }
 
 void timer_alarm_handler(int sig, struct siginfo *unused_si, mcontext_t *mc)
PATCH
}

# UML fixes HZ at 100 (arch/um/Kconfig, no prompt); Debian's amd64 kernel runs at 250. On a busy one-CPU
# guest the tick is when a running task gives the CPU up to one woken or signalled beside it: at 100 Hz
# a signalled victim waited up to 10 ms for its handler to run (the v2 reaction benchmark's cluster at
# 9-10 ms), which a real host's 4 ms tick does not show. Nothing in UML's clock depends on 100: its
# clockevent is a host timer armed for whatever the tick or hrtimers ask.
patch_hz() {
  awk 'BEGIN{n=0} /^config HZ$/ {hz=1} hz && /^\tdefault 100$/ {sub(/100/, "250"); hz=0; n++} {print} END{if (n != 1) exit 1}' \
    arch/um/Kconfig >arch/um/Kconfig.new || { say "HZ patch: arch/um/Kconfig changed"; exit 1; }
  mv arch/um/Kconfig.new arch/um/Kconfig
}

build() {
  local out="$1" work
  mkdir -p "$CACHE"
  work="$(mktemp -d "$CACHE/build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  say "building the UML kernel once into $out (~6 min on 2 free CPUs, niced; log $work/build.log)"
  apt_install gcc make flex bison bc libc6-dev xz-utils
  have_apt_lists || apt-get update -qq >&2
  (cd "$work" && apt-get download -q $SRC_PKG $CFG_PKG >&2)
  dpkg-deb -x "$work"/${SRC_PKG}_*.deb "$work/x"
  dpkg-deb -x "$work"/${CFG_PKG}_*.deb "$work/x"
  tar -C "$work" -xaf "$work/x/usr/src/$SRC_PKG.tar.xz"
  cd "$work/$SRC_PKG"
  configure "$work/x/usr/share/doc/$CFG_PKG/config.gz"
  if ! nice -n 19 make ARCH=um -j"$(nproc)" linux >"$work/build.log" 2>&1; then
    tail -30 "$work/build.log" >&2
    cp "$work/build.log" "$CACHE/last-failed-build.log"
    say "build failed (log kept in $CACHE/last-failed-build.log)"; exit 1
  fi
  strip -o "$out.tmp" linux
  (cd "$work" && ls ./*.deb | sed 's|^\./||') >"$out.version"
  mv "$out.tmp" "$out"
  cd / && rm -rf "$work"
  trap - EXIT
  say "built $out"
}

main() {
  local out; out="$(kernel_path)"
  if [ "${1:-}" = --path ]; then echo "$out"; [ -x "$out" ]; return; fi
  if [ ! -x "$out" ]; then
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    flock 9 # one builder at a time; a waiter finds the kernel built
    [ -x "$out" ] || build "$out"
  fi
  echo "$out"
}

main "$@"
