#!/bin/sh
# Offline stand-in for kube-apiserver / kube-controller-manager / kube-scheduler (installed in the
# image under the component's name; no Kubernetes binary can be had on these machines). It keeps
# running and answers the HTTPS health probes kubeadm's static pods use, on the component's secure
# port (--secure-port, --bind-address as the real flags; defaults 6443 / 10257 / 10259), with a
# self-signed certificate made at start (probes skip verification, as the kubelet's do).
# Every path (/livez, /readyz, /healthz) answers "ok"; SIGTERM stops it at once.
component="$(basename "$0")"
case "$component" in
  kube-apiserver) port=6443 ;;
  kube-controller-manager) port=10257 ;;
  kube-scheduler) port=10259 ;;
  *) port=10250 ;;
esac
bind=""
for arg in "$@"; do
  case "$arg" in
    --secure-port=*) port="${arg#*=}" ;;
    --bind-address=*) bind="${arg#*=}" ;;
  esac
done
case "$bind" in "" | 0.0.0.0 | ::) accept="$port" ;; *) accept="$bind:$port" ;; esac

dir="$(mktemp -d /tmp/standin.XXXXXX)"
cd "$dir" || exit 1
for p in livez readyz healthz; do echo ok >"$p"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
  -subj "/CN=$component" -keyout tls.key -out tls.crt 2>/dev/null || { echo "$component: cannot make a certificate" >&2; exit 1; }
echo "$component (bunlet stand-in) serving /livez /readyz /healthz on https://${accept} args: $*" >&2
openssl s_server -quiet -WWW -accept "$accept" -cert tls.crt -key tls.key </dev/null &
server=$!
trap 'kill "$server" 2>/dev/null; exit 0' TERM INT
wait "$server"
echo "$component: health server exited with $?" >&2
exit 1
