# Shared by build.sh and csi-images.sh: one program of a Go module at a pinned version, from the module proxy.

# build_go_module MODULE VERSION PACKAGE OUT: downloads MODULE@VERSION and builds PACKAGE of it, static and
# stripped, to OUT (through OUT.tmp, so a failed build leaves nothing at OUT). A replace by a directory of
# the repository that the module's zip leaves out (external-snapshotter's ./client, a module of its own)
# is pointed, in a copy, at that module at the same version from the proxy.
build_go_module() {
  local m="$1" v="$2" p="$3" out="$4" dir copy
  dir=$(GOFLAGS=-mod=mod go mod download -json "$m@$v" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -n "$dir" ] || { echo "$m@$v: the module proxy gave no source" >&2; return 1; }
  mkdir -p "$(dirname "$out")"
  if grep -qE '=> \./' "$dir/go.mod"; then
    copy="$(mktemp -d /tmp/bunlet-go-src-XXXXXX)"
    cp -r "$dir/." "$copy" && chmod -R u+w "$copy"
    (cd "$copy" && go mod edit $(sed -nE "s/^\\s*(replace\\s+)?(\\S+)( \\S+)? => \\.\\/.*/-replace=\\2=\\2@$v/p" go.mod)) || { rm -rf "$copy"; return 1; }
    (cd "$copy" && GOFLAGS="-trimpath -mod=mod" CGO_ENABLED=0 nice -n 10 go build -ldflags "-s -w -X main.version=$v" -o "$out.tmp" "$p") >&2 || { rm -rf "$copy"; return 1; }
    rm -rf "$copy"
  else
    (cd "$dir" && GOFLAGS="-trimpath -mod=readonly" CGO_ENABLED=0 nice -n 10 go build -ldflags "-s -w -X main.version=$v" -o "$out.tmp" "$p") >&2 || return 1
  fi
  mv "$out.tmp" "$out"
}
