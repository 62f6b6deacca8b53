// Micro-benchmark (not a test): what one /metrics scrape costs with a realistic set of series.
//   npx tsx bench/micro/prometheus-scrape.ts [SCRAPES]
// Instruction counts do not depend on what else runs on the machine; compare two versions with
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.0 node --import tsx bench/micro/prometheus-scrape.ts 0
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.200 node --import tsx bench/micro/prometheus-scrape.ts 200
//   grep ^summary /tmp/cg.0 /tmp/cg.200
// and divide the difference of the two totals by the number of scrapes.
//
// The series: 2 listeners × 3 zones × 6 query types of request counters and durations, sizes
// per transport, responses per rcode, and a forwarder's 3 upstreams × 3 rcodes of durations:
// about 1,100 sample lines, as a busy cluster DNS server shows.

import { Registry } from '../../src/server/promclient.js';
import { DURATION_BUCKETS } from '../../src/plugins/pkg/metrics.js';
import { batchedHistogram } from '../../src/plugins/pkg/series.js';
import { collectProcessMetrics } from '../../src/plugins/prometheus/process.js';
import { dnsMetrics, setBuildInfo } from '../../src/plugins/prometheus/metrics.js';
import { scrapeText } from '../../src/plugins/prometheus/exposition.js';

const registry = new Registry();
collectProcessMetrics(registry);
const dns = dnsMetrics(registry);
setBuildInfo(registry);
const upstreamDuration = batchedHistogram(registry, 'coredns_forward_request_duration_seconds', 'Seconds from sending a query to an upstream to its reply, by RCODE.', ['to', 'rcode'], DURATION_BUCKETS);

let x = 0;
/** A spread of values over the buckets, the same on every run. */
const next = (): number => {
  x = (x * 1103515245 + 12345) % 2147483648;
  return (x / 2147483648) * 0.05;
};
for (const server of ['dns://10.96.0.10:53', 'dns://169.254.20.10:53']) {
  for (const zone of ['cluster.local.', 'in-addr.arpa.', '.']) {
    for (const type of ['A', 'AAAA', 'SRV', 'PTR', 'TXT', 'other']) {
      for (let i = 0; i < 20; i++) {
        dns.requests.cell([server, zone, '', 'udp', '1', type]).inc();
        dns.duration.cell([server, zone, '', type]).observe(next());
      }
    }
    for (const proto of ['udp', 'tcp']) {
      dns.requestSize.cell([server, zone, '', proto]).observe(40 + (next() * 1000) / 0.05);
      dns.responseSize.cell([server, zone, '', proto]).observe(100 + (next() * 2000) / 0.05);
    }
    for (const rcode of ['NOERROR', 'NXDOMAIN', 'SERVFAIL']) dns.responses.cell([server, zone, '', rcode, '']).inc();
  }
}
for (const to of ['10.0.0.2:53', '10.0.0.3:53', '10.0.0.4:53']) {
  for (const rcode of ['NOERROR', 'NXDOMAIN', 'SERVFAIL']) upstreamDuration.cell([to, rcode]).observe(next());
}

const scrapes = Number(process.argv[2] ?? 200);
let bytes = 0;
// One scrape before counting in either mode: both runs pay the first-use costs (module loading,
// the first collect of each metric), so the difference is the steady per-scrape cost.
bytes += (await scrapeText(registry)).length;
const start = process.hrtime.bigint();
for (let i = 0; i < scrapes; i++) bytes += (await scrapeText(registry)).length;
const ns = Number(process.hrtime.bigint() - start);
console.log(`${scrapes} scrapes, ${bytes} bytes in all, ${scrapes > 0 ? (ns / scrapes / 1000).toFixed(0) : 0} µs per scrape (wall clock)`);
