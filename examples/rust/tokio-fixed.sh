#!/usr/bin/env bash
# Builds tokio-check against a copy of Debian's tokio 1.24.2 with the
# upstream starvation fixes applied as patches of ours
# (tokio-check/patches/*.patch, in name order: see each file's head), offline,
# under target/tokio-fixed, and prints the binary's path. The crate source
# in /usr/share/cargo/registry is never changed: the copy is patched, and a
# workspace of its own ([patch.crates-io]) builds tokio-check against it.
#
#   bin=$(bash examples/rust/tokio-fixed.sh)
#   PATCHES="1-lifo-slot-cap" bash examples/rust/tokio-fixed.sh   # some only
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PROFILE=${PROFILE:-release}
src=$(compgen -G "/usr/share/cargo/registry/tokio-1.24.*" | sort | tail -1 || true)
if [ -z "$src" ]; then
  echo "tokio-fixed.sh: Debian's tokio 1.24 sources are missing: apt-get install -y librust-tokio-dev" >&2
  exit 2
fi
patches=${PATCHES:-$(cd "$here/tokio-check/patches" && ls *.patch | sed 's/\.patch$//' | sort)}
name=$(echo $patches | tr ' ' '+')
dir="$here/target/tokio-fixed/$name"
stamp=$(cd "$here/tokio-check/patches" && cat $(printf '%s.patch ' $patches) | cksum | cut -d' ' -f1)
if [ ! -f "$dir/stamp" ] || [ "$(cat "$dir/stamp")" != "$stamp" ]; then
  rm -rf "$dir"
  mkdir -p "$dir/ws/tokio-check"
  cp -r "$src" "$dir/tokio"
  for p in $patches; do
    if command -v patch >/dev/null 2>&1; then
      (cd "$dir/tokio" && patch -p1 -s --no-backup-if-mismatch <"$here/tokio-check/patches/$p.patch")
    else
      (cd "$dir/tokio" && git apply -p1 <"$here/tokio-check/patches/$p.patch")
    fi
  done
  cat >"$dir/ws/Cargo.toml" <<TOML
[workspace]
members = ["tokio-check"]
resolver = "2"

[profile.release]
debug = false

[patch.crates-io]
tokio = { path = "$dir/tokio" }
TOML
  sed -e "s|path = \"../../../rust/execspec-trace\"|path = \"$root/rust/execspec-trace\"|" \
    -e "s|path = \"../common\"|path = \"$here/common\"|" "$here/tokio-check/Cargo.toml" >"$dir/ws/tokio-check/Cargo.toml"
  ln -s "$here/tokio-check/src" "$dir/ws/tokio-check/src"
  cp "$here/Cargo.lock" "$dir/ws/Cargo.lock"
  echo "$stamp" >"$dir/stamp"
fi
flag=--release
[ "$PROFILE" = debug ] && flag=
# (tokio as a path dependency shows its warnings: kept in build.log)
if ! (cd "$dir/ws" && cargo build $flag --offline -q) 2>"$dir/build.log"; then
  grep -E -A8 '^error' "$dir/build.log" >&2 || tail -30 "$dir/build.log" >&2
  exit 1
fi
echo "$dir/ws/target/$PROFILE/tokio-check"
