#!/usr/bin/env bash
# Autopath's server-side cost, on ../shared/bench's harness: the fwd workload's example.test
# names asked directly, and the same names rewritten as a ClusterFirstWithAutopath pod in ns1
# asks them (NAME.search.ns1.cluster.local.ap.k8s.io), against one kdns config (autopath
# ap.k8s.io, kubernetes over the bench cluster, forward to the bench's named, cache).
# Also without autopath (the RSS baseline) and without cache (every query expanded: 3 kubernetes
# candidates, then the name forwarded). Prints one line per run, then the QPS and server CPU
# µs per query of each pair and their ratio.
# WORKLOAD=miss asks the miss workload's names instead (each asked once: with cache on, every
# lookup is an uncached expansion, compared with a direct forwarded miss through the same cache).
#
#   DURATION [15]  CACHE_MODES ["on off"]  WORKLOAD [fwd]  PORT [5300]  (run.sh's knobs pass through)
#
# Run as root (network namespace and CPU pinning, as scripts/bench.sh). When BENCH_PORT is set
# this script is run.sh's server command instead and starts kdns (see the contract in
# ../shared/bench/README.md): KDNS_AP=0 leaves autopath out, KDNS_AP_CACHE=0 leaves cache out.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ -n "${BENCH_PORT:-}" ]; then
  : "${BENCH_DATA:?}" "${BENCH_RUN_DIR:?}" "${BENCH_WORKLOAD:?}" "${BENCH_UPSTREAM_PORT:?}"
  [ "$BENCH_WORKLOAD" = fwd ] || exit 3
  # The cluster DNS pod's resolv.conf: no search line, so an external name is 3 cluster
  # candidates and then the name itself.
  printf 'nameserver 127.0.0.1\n' >"$BENCH_RUN_DIR/resolv.conf"
  autopath="autopath ap.k8s.io $BENCH_RUN_DIR/resolv.conf"
  [ "${KDNS_AP:-1}" = 0 ] && autopath=""
  cache="cache 30"
  [ "${KDNS_AP_CACHE:-1}" = 0 ] && cache=""
  cat >"$BENCH_RUN_DIR/Corefile" <<CONF
.:$BENCH_PORT {
    bind 127.0.0.1
    $autopath
    kubernetes cluster.local {
        manifests $BENCH_DATA/cluster
    }
    forward . 127.0.0.1:$BENCH_UPSTREAM_PORT
    $cache
}
CONF
  # KDNS_NODE_FLAGS: extra node flags for kdns (e.g. --cpu-prof --cpu-prof-dir=DIR).
  # shellcheck disable=SC2086
  exec node ${KDNS_NODE_FLAGS:-} "$here/bin/kdns" serve --conf "$BENCH_RUN_DIR/Corefile"
fi

bench="$here/../shared/bench"
[ -d "$bench" ] || { echo "bench-autopath: $bench not found" >&2; exit 2; }
command -v dnsperf >/dev/null || { echo "bench-autopath: dnsperf not installed (apt-get install dnsperf, or ../shared/bench/setup.sh)" >&2; exit 2; }
(cd "$here" && npx tsc -p tsconfig.json) || exit 1

data="$here/.bench/autopath-data"
apdata="$here/.bench/autopath-data-ap"
if [ ! -f "$data/meta.json" ]; then
  mkdir -p "$data"
  node "$bench/gen-fixture.js" --out "$data" || exit 1
fi
# The same data, with the fwd queries (and their warm-up pass) asked the autopath way.
rm -rf "$apdata" && mkdir -p "$apdata"
for f in "$data"/*; do ln -s "$f" "$apdata/$(basename "$f")"; done
for f in queries-fwd.txt warm-fwd.txt queries-miss.txt warm-miss.txt; do
  [ -f "$data/$f" ] || continue
  rm "$apdata/$f"
  awk 'NF >= 2 { sub(/\.$/, "", $1); $1 = $1 ".search.ns1.cluster.local.ap.k8s.io"; print }' "$data/$f" >"$apdata/$f"
done

export RESULTS="$here/.bench/autopath-$(date -u +%Y%m%dT%H%M%SZ).tsv"
export TAG="${TAG:-autopath}"
PORT="${PORT:-5300}"
lines=()
run() { # name data-dir KDNS_AP KDNS_AP_CACHE
  local out
  out="$(DATA_DIR="$2" KDNS_AP="$3" KDNS_AP_CACHE="$4" "$bench/run.sh" "$1" "${WORKLOAD:-fwd}" "$PORT" env KDNS_AP="$3" KDNS_AP_CACHE="$4" "$here/scripts/bench-autopath.sh")"
  echo "$out"
  lines+=("$out")
}
for c in ${CACHE_MODES:-on off}; do
  flag=1
  [ "$c" = off ] && flag=0
  run "kdns-noautopath-cache$c" "$data" 0 "$flag"
  run "kdns-direct-cache$c" "$data" 1 "$flag"
  run "kdns-autopath-cache$c" "$apdata" 1 "$flag"
done

# Server CPU µs per answered query, from the raw row (process CPU % of the run's duration).
cpu() { awk -F'\t' -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["name"] == n && $col["completed"] > 0 { v = $col["srv_proc_pct"] / 100 * $col["duration_s"] / $col["completed"] * 1e6 } END { if (v != "") printf "%.1f", v }' "$RESULTS"; }
qps() { printf '%s\n' "${lines[@]}" | awk -v n="$1" '$1 == n { for (i = 1; i <= NF; i++) if ($i ~ /^qps=/) { sub(/qps=/, "", $i); print $i } }'; }
rss() { printf '%s\n' "${lines[@]}" | awk -v n="$1" '$1 == n { for (i = 1; i <= NF; i++) if ($i ~ /^rss=/) { sub(/rss=/, "", $i); print $i } }'; }
echo
for c in ${CACHE_MODES:-on off}; do
  d="$(qps "kdns-direct-cache$c")"
  a="$(qps "kdns-autopath-cache$c")"
  if [ -n "$d" ] && [ -n "$a" ]; then
    awk -v d="$d" -v a="$a" -v c="$c" -v dc="$(cpu "kdns-direct-cache$c")" -v ac="$(cpu "kdns-autopath-cache$c")" 'BEGIN { printf "cache %s: direct %.0f qps, through autopath %.0f qps: %.1f%% of direct; server CPU %s vs %s µs per lookup: %.2fx\n", c, d, a, 100 * a / d, dc, ac, ac / dc }'
  fi
  echo "cache $c: RSS without autopath $(rss "kdns-noautopath-cache$c"), with autopath (direct names) $(rss "kdns-direct-cache$c"), (ap names) $(rss "kdns-autopath-cache$c")"
done
echo "raw rows: $RESULTS" >&2
