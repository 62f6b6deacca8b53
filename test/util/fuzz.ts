// Mutated queries for the fuzz test and the flood script (scripts/fuzz-flood.mjs): valid queries
// for every kind of answer a server with the stock plugins makes, mutated with a fixed seed,
// each under its own ID (its index, modulo 65536) so a reply names the query it answers.
import { fileURLToPath } from 'node:url';
import { encodeMessage } from '../../src/lib/dns/codec.js';
import { message, mutate, prng } from './dnstestkit.js';

const CLUSTER = fileURLToPath(new URL('../../examples/cluster', import.meta.url));

/**
 * Corefile lines (indented for a server block) answering for the demo cluster (examples/cluster)
 * with kubernetes, and for x.example.org (10.9.9.9) with hosts, as the stock Corefile would.
 */
export const DEMO_CLUSTER_PLUGINS = `    hosts {
        10.9.9.9 x.example.org
        fallthrough
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests ${CLUSTER}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }`;

/**
 * The server the seeds are made for, listening on {PORT}: the demo cluster's plugins, chaos,
 * cache, loadbalance, and forward to a named serving exampleZone().
 */
export function fuzzCorefile(namedPort: number): string {
  return `.:{PORT} {
    bind 127.0.0.1
    chaos
${DEMO_CLUSTER_PLUGINS}
    cache 30
    loadbalance
    forward . 127.0.0.1:${namedPort}
}
`;
}

/** Valid queries for every kind of answer the server makes. */
export function fuzzSeeds(): Uint8Array[] {
  const edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] };
  const q = (name: string, type: number, klass = 1, withEdns = true, opcode = 0): Uint8Array =>
    encodeMessage(message({ qr: false, opcode, rd: true, questions: [{ name, type, class: klass }], edns: withEdns ? edns : undefined }));
  return [
    q('web.demo.svc.cluster.local.', 1),
    q('web.demo.svc.cluster.local.', 28, 1, false),
    q('_http._tcp.web.demo.svc.cluster.local.', 33),
    q('nope.demo.svc.cluster.local.', 1, 1, false),
    q('10.0.96.10.in-addr.arpa.', 12),
    q('x.example.org.', 1),
    q('x.example.org.', 255, 1, false),
    q('version.bind.', 16, 3),
    q('web.demo.svc.cluster.local.', 1, 3, false),
    q('www.example.test.', 1),
    q('txt-big.example.test.', 16, 1, false),
    q('alias.example.test.', 1),
    q('x.example.org.', 6, 1, false, 4),
  ];
}

/** `count` mutated queries from `seed`, starting at index `from` (IDs follow the index). */
export function* mutatedQueries(count: number, seed: number, from = 0): Generator<Uint8Array> {
  const rand = prng(seed);
  const corpus = fuzzSeeds();
  for (let i = from; i < from + count; i++) {
    const p = mutate(corpus[Math.floor(rand() * corpus.length)] as Uint8Array, rand);
    if (p.length >= 2) {
      p[0] = (i >> 8) & 0xff;
      p[1] = i & 0xff;
    }
    yield p;
  }
}
