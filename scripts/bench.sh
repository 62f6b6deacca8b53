#!/usr/bin/env bash
# npm run bench: kdns against its peers (../shared/bench), every server in the same session,
# then a Markdown summary with QPS, CPU µs/query and RSS side by side.
#   REPS [1]  DURATION [15]  WORKLOADS ["auth fwd miss"]  PEERS ["minimal dnsmasq unbound kresd named"]
#   DATA_DIR [../shared/bench/data] (fixtures; run.sh reads the same variable)
#   KDNS_VARIANTS ["kubernetes hosts"] (auth variants; fwd runs kdns with forward + cache,
#   miss that and kdns-k8s, the stock Kubernetes Corefile)
# Needs root for the network namespace and pinning; installs the peers with ../shared/bench/setup.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="$here/../shared/bench"
[ -d "$bench" ] || { echo "bench: $bench not found (../shared/bench beside the repo)" >&2; exit 2; }
[ -f "$here/dist/cli/main.js" ] || (cd "$here" && npx tsc -p tsconfig.json)
if [ ! -f "${DATA_DIR:-$bench/data}/meta.json" ] || ! command -v dnsperf >/dev/null; then
  (cd "$bench" && ./setup.sh) || { echo "bench: setup.sh failed" >&2; exit 1; }
fi
REPS="${REPS:-1}"
WORKLOADS="${WORKLOADS:-auth fwd miss}"
PEERS="${PEERS:-minimal dnsmasq unbound kresd named}"
VARIANTS="${KDNS_VARIANTS:-kubernetes hosts}"
mkdir -p "$here/.bench"
export RESULTS="$here/.bench/results-$(date -u +%Y%m%dT%H%M%SZ).tsv"
export TAG="${TAG:-kdns-bench}"
PORT="${PORT:-5300}"

for rep in $(seq 1 "$REPS"); do
  for wl in $WORKLOADS; do
    for peer in $PEERS; do
      echo "== rep $rep: $peer $wl" >&2
      "$bench/run.sh" "$peer" "$wl" "$PORT" || echo "bench: $peer $wl failed" >&2
    done
    if [ "$wl" = auth ]; then
      for v in $VARIANTS; do
        echo "== rep $rep: kdns-$v $wl" >&2
        KDNS_MODE="$v" "$bench/run.sh" "kdns-$v" "$wl" "$PORT" env KDNS_MODE="$v" "$here/scripts/bench-kdns.sh" || echo "bench: kdns-$v failed" >&2
      done
    else
      echo "== rep $rep: kdns $wl" >&2
      "$bench/run.sh" kdns "$wl" "$PORT" "$here/scripts/bench-kdns.sh" || echo "bench: kdns $wl failed" >&2
      if [ "$wl" = miss ]; then
        echo "== rep $rep: kdns-k8s $wl" >&2
        "$bench/run.sh" kdns-k8s "$wl" "$PORT" env KDNS_MODE=k8s "$here/scripts/bench-kdns.sh" || echo "bench: kdns-k8s $wl failed" >&2
      fi
    fi
  done
done
node "$bench/summarize.js" "$RESULTS"
echo "raw rows: $RESULTS" >&2
