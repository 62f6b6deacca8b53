#!/usr/bin/env bash
# Autopath's server-side cost: bench/autopath.ts on the repository's bench (bench/README.md).
# One kdns (autopath ap.k8s.io, kubernetes over the bench's cluster, forward to the bench's
# upstream, cache 30) asked the fwd workload's names as they are and as a ClusterFirstWithAutopath
# pod of one namespace asks them; also without autopath, and each without the cache. Prints the
# bench's table, then per cache mode the QPS and server CPU µs per lookup of direct against
# autopath names, and the RSS with and without autopath.
#
#   WORKLOAD [fwd | miss: each name asked once]  CACHE_MODES ["on off"]
#   and the options of npm run bench (DURATION, KDNS_REV, SERVER_CPUS, … : npm run bench -- --help)
#
# Run as root, as npm run bench: a network namespace of its own and pinned CPUs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
AUTOPATH_WORKLOAD="${WORKLOAD:-fwd}" exec node --import tsx bench/autopath.ts "$@"
