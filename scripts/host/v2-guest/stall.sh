# The v2 guest's stall decision (sourced by v2-guest.sh; pure: numbers in, a verdict out, so
# test/support/v2-guest-stall.test.ts checks it by a table without a guest).
#
#   guest_stall_verdict NOW STARTED LIMIT [MTIME]...
#     NOW, STARTED: epoch seconds (now; when the guest was started). LIMIT: seconds without progress
#     that make a stall. MTIME: epoch seconds of each progress mark — the guest's heartbeat file (its
#     uptime, rewritten every 2 s by stage2.sh), the command's stdout and stderr, the guest console —
#     or empty/"-" for one that does not exist yet.
#   Prints "stalled QUIET" or "ok QUIET" (QUIET: seconds since the last progress; the start counts as
#   progress, so a guest that never boots is a stall too). Any progress mark resets it: a guest whose
#   heartbeat is dead but whose command still writes is alive; a long quiet test still has the heartbeat.
guest_stall_verdict() {
  local now=$1 last=$2 limit=$3 m
  shift 3
  for m in "$@"; do
    [[ "$m" =~ ^[0-9]+$ ]] && [ "$m" -gt "$last" ] && last=$m
  done
  local quiet=$((now - last))
  [ "$quiet" -lt 0 ] && quiet=0
  if [ "$quiet" -ge "$limit" ]; then echo "stalled $quiet"; else echo "ok $quiet"; fi
}
