#!/usr/bin/env bash
# Measures what well-behaved clients get while kdns is abused over TCP: UDP latency and the
# time a new TCP client waits for its answer, with idle, half-frame and non-reading pipelining
# connections open (src/testutil/tcpabuse.ts). Needs `npm run build` first.
#   scripts/tcp-abuse.sh [IDLE HALF PIPELINERS SECONDS]   (default 2000 200 50 10)
# KDNS_BIN=path/to/bin/kdns measures another build (e.g. a worktree of an older commit).
# KDNS_TASKSET / LOAD_TASKSET prefix kdns / the load (e.g. "taskset -c 0" and "taskset -c 1").
# KDNS_NODE_FLAGS replaces the node flags kdns ships with (e.g. add --trace-gc); KDNS_LOG keeps
# kdns's output in that file.
# Prints one JSON line: {"udp":{p50,p99,...},"newTcp":{...},"steady":{...},...}; latencies in ms;
# "steady" counts only the probes sent once every abusive connection was open.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
idle="${1:-2000}" half="${2:-200}" pipe="${3:-50}" seconds="${4:-10}"
ulimit -n $((idle + half + pipe + 4096))
dir="$(mktemp -d)"
port="${PORT:-$((20000 + RANDOM % 20000))}"
cat > "$dir/Corefile" <<CONF
example.org:$port {
    bind 127.0.0.1
    hosts {
        10.0.0.1 a.example.org
    }
}
CONF
${KDNS_TASKSET:-} node ${KDNS_NODE_FLAGS:---max-semi-space-size=1 --v8-pool-size=1} "${KDNS_BIN:-$here/bin/kdns}" serve --conf "$dir/Corefile" > "${KDNS_LOG:-$dir/log}" 2>&1 &
kdns=$!
trap 'kill $kdns 2>/dev/null; wait $kdns 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do grep -q listening "${KDNS_LOG:-$dir/log}" && break; sleep 0.1; done
${LOAD_TASKSET:-} node "$here/dist/testutil/tcpabuse.js" --port "$port" --idle "$idle" --half "$half" --pipeliners "$pipe" --seconds "$seconds" --tcp-every 50
