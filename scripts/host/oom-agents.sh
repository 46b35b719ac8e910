#!/usr/bin/env bash
# Installs the user-space OOM agents the reaction benchmarks compare bunlet with, from Debian:
#   earlyoom      (polls /proc/meminfo; scripts/bench/reaction.ts and reaction-v2.ts)
#   systemd-oomd  (PSI on cgroup v2 units with ManagedOOMMemoryPressure=; scripts/bench/reaction-v2.ts,
#                  which starts it inside the --systemd v2 guest)
# Both services are left disabled: Debian enables them on install, and the v2 guest boots this host's
# root, so an enabled systemd-oomd or earlyoom would start in every `v2-guest.sh --systemd` run and
# kill other tests' processes. Idempotent; prints nothing when both are installed and disabled.
#   scripts/host/oom-agents.sh
set -euo pipefail

say() { echo "oom-agents: $*" >&2; }
PACKAGES=(earlyoom systemd-oomd)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { say "missing ${missing[*]} and not root: run as root"; exit 1; }
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d exit 101: dpkg must not start the services on this host.
  created_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && created_policy=1
  fi
  trap '[ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/bunlet-apt-oom.log 2>&1; then
    apt-get update >/tmp/bunlet-apt-update.log 2>&1
    apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/bunlet-apt-oom.log 2>&1 || { cat /tmp/bunlet-apt-oom.log >&2; exit 1; }
  fi
fi
# Offline (this host's PID 1 need not be systemd): removes the units' .wants symlinks.
for unit in earlyoom.service systemd-oomd.service systemd-oomd.socket; do
  if [ -n "$(find /etc/systemd/system -name "$unit" -path '*.wants/*' 2>/dev/null)" ]; then
    say "disabling $unit (it would start in every systemd v2 guest)"
    systemctl disable "$unit" >/dev/null 2>&1 || find /etc/systemd/system -name "$unit" -path '*.wants/*' -delete
  fi
done
