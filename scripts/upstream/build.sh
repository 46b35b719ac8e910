#!/usr/bin/env bash
# Builds the upstream Kubernetes test bed from the Go module proxy, once per release, and prints the
# directory that holds the binaries. These binaries are test infrastructure: they are never committed.
#
#   scripts/upstream/build.sh            # build what is missing, print /var/tmp/bunlet-upstream/<release>/bin
#   scripts/upstream/build.sh --path     # print that directory, build nothing (exit 1 if incomplete)
#   BUNLET_UPSTREAM_TARGETS="kube-apiserver kubelet" scripts/upstream/build.sh   # a subset
#   BUNLET_UPSTREAM_TARGETS=local-path-provisioner scripts/upstream/build.sh     # not in the default set
#   BUNLET_UPSTREAM_TARGETS="csi-provisioner csi-attacher" scripts/upstream/build.sh  # nor are the CSI sidecars
#
# How: a throwaway Go module requires k8s.io/kubernetes at the pinned release and replaces each staging
# module (k8s.io/api, k8s.io/client-go, … which k8s.io/kubernetes requires as v0.0.0) by the matching
# v0.X.Y, so `go build` compiles upstream's own cmd/ packages. Cache: $BUNLET_UPSTREAM_CACHE
# (default /var/tmp/bunlet-upstream), keyed by release; Go's module and build caches are reused too.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/module-lib.sh"

RELEASE="${BUNLET_UPSTREAM_RELEASE:-v1.37.2}"
CACHE="${BUNLET_UPSTREAM_CACHE:-/var/tmp/bunlet-upstream}"
DIR="$CACHE/$RELEASE"
BIN="$DIR/bin"
# name → Go package (relative to k8s.io/kubernetes). e2e.test is built with `go test -c`.
declare -A PKG=(
  [kube-apiserver]=cmd/kube-apiserver
  [kube-controller-manager]=cmd/kube-controller-manager
  [kube-scheduler]=cmd/kube-scheduler
  [kubelet]=cmd/kubelet
  [kubectl]=cmd/kubectl
  [agnhost]=test/images/agnhost
  [sample-device-plugin]=test/images/sample-device-plugin
  [e2e.test]=test/e2e
)
# Programs from other modules of the same build graph (the ginkgo CLI runs e2e.test in parallel).
declare -A EXTERNAL=([ginkgo]=github.com/onsi/ginkgo/v2/ginkgo)
ORDER=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl agnhost sample-device-plugin ginkgo e2e.test)
TARGETS=(${BUNLET_UPSTREAM_TARGETS:-${ORDER[@]}})
# Programs of modules of their own, not in the default set: rancher's local-path-provisioner (the dynamic
# provisioner of hostPath/local PVs on bare metal) and the CSI controller sidecars external-provisioner and
# external-attacher (kubernetes-csi; the proxy refuses csi-driver-host-path and node-driver-registrar).
# name → "module version package". Each is built in its module's own directory with its own go.mod (their
# replace directives rule out `go install module@version`) into a cache keyed by its version; $BIN links to it.
declare -A MODULE=(
  [local-path-provisioner]="github.com/rancher/local-path-provisioner ${BUNLET_LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30} ."
  [csi-provisioner]="github.com/kubernetes-csi/external-provisioner/v5 ${BUNLET_CSI_PROVISIONER_VERSION:-v5.3.0} ./cmd/csi-provisioner"
  [csi-attacher]="github.com/kubernetes-csi/external-attacher/v4 ${BUNLET_CSI_ATTACHER_VERSION:-v4.13.0} ./cmd/csi-attacher"
)
module_bin() { local m v p; read -r m v p <<<"${MODULE[$1]}"; echo "$CACHE/$1/$v/bin/$1"; }

say() { echo "upstream: $*" >&2; }

missing() {
  local t out=()
  for t in "${TARGETS[@]}"; do
    if [ -n "${MODULE[$t]:-}" ]; then [ -x "$(module_bin "$t")" ] && [ "$(readlink "$BIN/$t")" = "$(module_bin "$t")" ] || out+=("$t")
    else [ -x "$BIN/$t" ] || out+=("$t"); fi
  done
  echo "${out[@]:-}"
}

# Builds a program of MODULE into its versioned cache (a no-op when there) and links $BIN to it.
build_module() {
  local name="$1" m v p out
  read -r m v p <<<"${MODULE[$name]}"
  out="$(module_bin "$name")"
  if [ ! -x "$out" ]; then
    say "building $name ($m $v)"
    build_go_module "$m" "$v" "$p" "$out"
  fi
  mkdir -p "$BIN" && ln -sfn "$out" "$BIN/$name"
}

if [ "${1:-}" = "--path" ]; then
  [ -z "$(missing)" ] || exit 1
  echo "$BIN"; exit 0
fi

todo=($(missing))
if [ ${#todo[@]} -eq 0 ]; then echo "$BIN"; exit 0; fi
command -v go >/dev/null || { say "go is not installed: the upstream test bed needs Go >= 1.26"; exit 1; }

own=0
for t in "${todo[@]}"; do
  if [ -n "${MODULE[$t]:-}" ]; then build_module "$t"; own=1; fi
done
if [ $own -eq 1 ]; then
  todo=($(missing))
  if [ ${#todo[@]} -eq 0 ]; then echo "$BIN"; exit 0; fi
fi

staging_version="v0.${RELEASE#v1.}"
src="$DIR/src"
mkdir -p "$src" "$BIN"
if [ ! -f "$src/go.sum" ]; then
  say "resolving k8s.io/kubernetes $RELEASE (staging modules at $staging_version)"
  mod=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$RELEASE" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module bunlet.invalid/upstream"
    echo
    echo "go $(sed -n 's/^go //p' "$mod")"
    echo
    echo "require k8s.io/kubernetes $RELEASE"
    echo
    echo "replace ("
    grep -oE '^\s+k8s\.io/[a-z0-9-]+ => \./staging/' "$mod" | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } >"$src/go.mod.tmp"
  mv "$src/go.mod.tmp" "$src/go.mod"
  # The packages to build, imported once so `go mod tidy` keeps their dependencies.
  {
    echo "//go:build tools"
    echo "package upstream"
    echo "import ("
    for t in "${ORDER[@]}"; do [ -n "${PKG[$t]:-}" ] && echo "	_ \"k8s.io/kubernetes/${PKG[$t]}\""; done
    echo ")"
  } >"$src/tools.go"
  (cd "$src" && go mod tidy -e >&2)
fi

# Static binaries, as upstream's release builds are (agnhost also goes into an image with no libc).
export GOFLAGS="-trimpath -mod=mod" CGO_ENABLED=0
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$RELEASE -X k8s.io/client-go/pkg/version.gitVersion=$RELEASE"
cmds=()
for t in "${todo[@]}"; do
  if [ -n "${EXTERNAL[$t]:-}" ]; then cmds+=("${EXTERNAL[$t]}")
  elif [ "$t" != e2e.test ]; then cmds+=("k8s.io/kubernetes/${PKG[$t]}"); fi
done
if [ ${#cmds[@]} -gt 0 ]; then
  say "building ${cmds[*]##*/} ($RELEASE); a cold build takes several minutes on 2 CPUs"
  (cd "$src" && nice -n 10 go build -ldflags "$ldflags" -o "$BIN/" "${cmds[@]}")
fi
if [[ " ${todo[*]} " == *" e2e.test "* ]]; then
  say "building e2e.test ($RELEASE)"
  (cd "$src" && nice -n 10 go test -c -ldflags "$ldflags" -o "$BIN/e2e.test.tmp" k8s.io/kubernetes/test/e2e)
  mv "$BIN/e2e.test.tmp" "$BIN/e2e.test"
fi
[ -z "$(missing)" ] || { say "still missing: $(missing)"; exit 1; }
echo "$BIN"
