#!/bin/sh
# Builds the two lookup clients of the real-client rig from lookup.c beside this script:
#   OUTDIR/lookup-glibc  gcc, dynamic (glibc's NSS modules are loaded at run time, as in a pod)
#   OUTDIR/lookup-musl   musl-gcc -static (an Alpine program, without needing Alpine)
# OUTDIR defaults to build/realclient in the repository. Each binary is written under a temporary
# name and renamed into place, so parallel builds and readers never see half a file.
# Exit 0 when both are built; otherwise 1, with what to install on stderr. Installs nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../../build/realclient}
src=$here/lookup.c

if ! command -v gcc >/dev/null 2>&1; then
  echo "realclient: needs gcc and the glibc headers: apt-get install gcc libc6-dev" >&2
  exit 1
fi
if ! command -v musl-gcc >/dev/null 2>&1; then
  echo "realclient: needs musl-gcc: apt-get install musl-tools" >&2
  exit 1
fi

mkdir -p "$out"
tmp_glibc="$out/.lookup-glibc.$$"
tmp_musl="$out/.lookup-musl.$$"
trap 'rm -f "$tmp_glibc" "$tmp_musl"' EXIT
gcc -O2 -Wall -o "$tmp_glibc" "$src"
musl-gcc -O2 -Wall -static -o "$tmp_musl" "$src"
mv -f "$tmp_glibc" "$out/lookup-glibc"
mv -f "$tmp_musl" "$out/lookup-musl"
