#!/usr/bin/env bash
# The e2e images the release's tests run, built offline under the exact names and tags of the
# release's test/utils/image/manifest.go, so a node imports them and nothing is pulled:
#   agnhost      the release's own agnhost (built by build.sh) on a busybox root with Debian's bash and curl
#                (the tests' hooks call it), and the users, groups and files of upstream's
#                test/images/agnhost/Dockerfile
#   busybox      upstream BusyBox 1.37.0, built from source by busybox.sh (every image below has it)
#   pause        bunlet's static pause program (scripts/host/images/pause.c)
#   nonewprivs   the release's test/images/nonewprivs (nnp, setuid) on busybox
#   nonroot      busybox with USER 1234, as upstream's test/images/nonroot
#   nginx        Debian's nginx program (the package extracted, never installed: installing starts a
#                service on the host) on busybox, serving /usr/share/nginx/html on port 80 (upstream:
#                nginx 1.27 on Alpine); the back-off-on-image-update test runs `sh -c "sleep 5"` in it
#   glibc-dns-testing  busybox with Debian's dash as /bin/sh and Debian's glibc hostname (upstream:
#                debian:bookworm-slim with dnsutils), files before DNS in nsswitch.conf as Debian's
# Images not built here (perl, …) are listed in docs/upstream.md with the tests that skip for them.
#   scripts/upstream/images.sh            # build what is missing; prints the directory (name.tar + refs.txt)
#   scripts/upstream/images.sh import SOCK  # also import them into the containerd on SOCK (namespace k8s.io),
#                                           # or, SOCK being a CRI-O's crio.sock, into that instance's storage
#                                           # (scripts/host/crio.sh import; BUNLET_CRIO_ROOT names its root)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RELEASE="${BUNLET_UPSTREAM_RELEASE:-v1.37.2}"
CACHE="${BUNLET_UPSTREAM_CACHE:-/var/tmp/bunlet-upstream}"
DIR="$CACHE/$RELEASE"
source "$HERE/../host/image-lib.sh"
say() { echo "upstream-images: $*" >&2; }

BIN="$(BUNLET_UPSTREAM_TARGETS=agnhost bash "$HERE/build.sh")"
MOD="$(cd "$DIR/src" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
MANIFEST="$MOD/test/utils/image/manifest.go"
BUSYBOX="$(bash "$HERE/busybox.sh")"
export BUSYBOX

# Debian's nginx binary, downloaded and extracted once (cached beside the release's builds).
nginx_binary() {
  local dir="$CACHE/nginx-debian"
  if [ ! -x "$dir/nginx" ]; then
    local work; work="$(mktemp -d /tmp/bunlet-nginx-XXXXXX)"
    chmod 755 "$work" # apt downloads as _apt where it can
    (cd "$work" && { apt-get download nginx >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get download nginx >/dev/null 2>&1; }; }) \
      || { say "apt-get download nginx failed"; rm -rf "$work"; exit 1; }
    dpkg-deb -x "$work"/nginx_*.deb "$work/x"
    mkdir -p "$dir"
    cp "$work/x/usr/sbin/nginx" "$dir/nginx.tmp" && mv "$dir/nginx.tmp" "$dir/nginx"
    rm -rf "$work"
  fi
  echo "$dir/nginx"
}
NGINX="$(nginx_binary)"

# manifest.go's key (Agnhost, BusyBox, …) → "registry/name:tag" (configs[Key] = Config{list.Registry, "name", "tag"}).
ref_of() {
  local key="$1" line registry
  line="$(grep -E "^\s*configs\[$key\] = Config\{list\.[A-Za-z0-9]+, \"[^\"]+\", \"[^\"]+\"\}" "$MANIFEST" | head -n1)"
  [ -n "$line" ] || { say "configs[$key] is not in $MANIFEST"; exit 1; }
  registry="$(sed -E 's/.*Config\{list\.([A-Za-z0-9]+),.*/\1/' <<<"$line")"
  local host; host="$(grep -E "^\s+$registry:\s+\"" "$MANIFEST" | head -n1 | sed -E 's/.*"(.*)".*/\1/')"
  echo "$host/$(sed -E 's/.*, "([^"]+)", "([^"]+)"\}.*/\1:\2/' <<<"$line")"
}

populate_agnhost() {
  local root="$1"
  populate_busybox "$root"
  # Upstream's agnhost (alpine) has bash and curl; e2e tests run `/bin/bash -c` scripts in it.
  copy_with_libs "$root" /bin/bash /usr/bin/curl
  cp "$BIN/agnhost" "$root/agnhost"; ln -s agnhost "$root/agnhost-2"
  mkdir -p "$root/uploads"
  cp "$MOD/test/images/agnhost/porter/localhost.crt" "$MOD/test/images/agnhost/porter/localhost.key" "$root/"
  echo "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh" >>"$root/etc/passwd"
  printf 'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' >>"$root/etc/group"
}
populate_pause() { cp "$WORK/pause" "$1/pause"; }
populate_nonewprivs() { populate_busybox "$1"; mkdir -p "$1/usr/local/bin"; cp "$WORK/nnp" "$1/usr/local/bin/nnp"; chmod 4755 "$1/usr/local/bin/nnp"; }
populate_nonroot() { populate_busybox "$1"; }
populate_nginx() {
  local root="$1"
  populate_busybox "$root"
  mkdir -p "$root/usr/sbin" "$root/etc/nginx" "$root/usr/share/nginx/html" "$root/var/log/nginx" "$root/var/lib/nginx" "$root/run"
  cp "$NGINX" "$root/usr/sbin/nginx"
  copy_libs_of "$root" "$NGINX"
  cat >"$root/etc/nginx/nginx.conf" <<'CONF'
worker_processes 1;
error_log stderr;
pid /run/nginx.pid;
events { worker_connections 256; }
http {
  access_log /dev/stdout;
  server { listen 80; root /usr/share/nginx/html; }
}
CONF
  echo '<h1>Welcome to nginx!</h1>' >"$root/usr/share/nginx/html/index.html"
  echo "nginx:x:101:101:nginx:/var/lib/nginx:/bin/false" >>"$root/etc/passwd"
  echo "nginx:x:101:" >>"$root/etc/group"
}
# A glibc program resolves names through NSS: `hostname -f` reads the pod's /etc/hosts. Busybox's sh would
# run its own hostname applet (PREFER_APPLETS), so sh is dash, as in upstream's Debian image.
populate_glibc_dns_testing() {
  local root="$1"
  populate_busybox "$root"
  rm -f "$root/bin/sh" "$root/bin/hostname"
  copy_with_libs "$root" /bin/dash /bin/hostname
  ln -s dash "$root/bin/sh"
  echo "hosts: files dns" >"$root/etc/nsswitch.conf"
}

key="$( { echo 2; sha256sum "$BUSYBOX" "$NGINX" /bin/bash /usr/bin/curl /bin/dash /bin/hostname "$BIN/agnhost" "$HERE/../host/images/pause.c" "$HERE/../host/image-lib.sh" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)"
OUT="$DIR/images/$key"
if [ ! -f "$OUT/refs.txt" ]; then
  say "building the e2e images into $OUT"
  mkdir -p "$OUT"
  WORK="$(mktemp -d /tmp/bunlet-e2e-images-XXXXXX)"
  trap 'rm -rf "$WORK"' EXIT
  gcc -static -O2 -o "$WORK/pause" "$HERE/../host/images/pause.c"
  (cd "$DIR/src" && CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod" go build -o "$WORK/nnp" k8s.io/kubernetes/test/images/nonewprivs)
  : >"$OUT/refs.txt.tmp"
  build() { # build NAME MANIFEST-KEY CONFIG_ARGS...
    local fn="$1" key="$2"; shift 2
    local ref; ref="$(ref_of "$key")"
    build_image "$fn" "${ref##*:}" "$OUT/$fn.tar" "$@"
    echo "$fn.tar ${ref%:*}" >>"$OUT/refs.txt.tmp"
  }
  sh_env=(--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.workingdir /)
  build agnhost Agnhost "${sh_env[@]}" --config.entrypoint /agnhost --config.cmd pause
  build busybox BusyBox "${sh_env[@]}" --config.cmd sh
  build pause Pause --config.entrypoint /pause --config.workingdir /
  build nonewprivs Nonewprivs "${sh_env[@]}" --config.cmd nnp
  build nonroot NonRoot "${sh_env[@]}" --config.user 1234 --config.cmd sh
  build nginx Nginx "${sh_env[@]}" --config.entrypoint nginx --config.cmd -g --config.cmd "daemon off;" --config.exposedports 80/tcp
  build glibc_dns_testing GlibcDnsTesting "${sh_env[@]}" --config.cmd sh
  mv "$OUT/refs.txt.tmp" "$OUT/refs.txt"
fi

# The tag an image tarball carries (its OCI layout's ref name, as build_image gave it).
tag_of() { tar -xOf "$1" ./index.json | sed -E 's/.*"org\.opencontainers\.image\.ref\.name":"([^"]+)".*/\1/'; }

# A CRI-O's storage, through its control script: the instance whose run dir holds SOCK.
import_crio() {
  local sock="$1" tar base ref alias
  [ -n "${BUNLET_CRIO_ROOT:-}" ] || { say "importing into CRI-O on $sock needs BUNLET_CRIO_ROOT (its root)"; exit 1; }
  while read -r tar base; do
    ref="$base:$(tag_of "$OUT/$tar")"
    # The previous agnhost the release still names (AgnhostPrev) is the same program.
    [ "$ref" = "$(ref_of Agnhost)" ] && alias="$(ref_of AgnhostPrev)" || alias=""
    BUNLET_CRIO_DIR="$(dirname "$sock")" bash "$HERE/../host/crio.sh" import "$OUT/$tar" "$ref" ${alias:+"$alias"} >/dev/null
  done <"$OUT/refs.txt"
}

import_containerd() {
  local sock="$1" tar base
  while read -r tar base; do
    ctr --address "$sock" -n k8s.io images import --base-name "$base" "$OUT/$tar" >/dev/null
  done <"$OUT/refs.txt"
  # The previous agnhost the release still names (AgnhostPrev) is the same program.
  ctr --address "$sock" -n k8s.io images tag --force "$(ref_of Agnhost)" "$(ref_of AgnhostPrev)" >/dev/null
}

if [ "${1:-}" = import ]; then
  sock="${2:?usage: images.sh import SOCKET}"
  case "$sock" in
    */crio.sock) import_crio "$sock" ;;
    *) import_containerd "$sock" ;;
  esac
fi
echo "$OUT"
