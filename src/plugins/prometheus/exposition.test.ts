// The /metrics text is an interface: dashboards, alerts and recording rules read it by name,
// label and layout. These tests pin the text kdns serves, byte for byte where the values are
// kdns's own, so that a change of a dependency or of the rendering cannot alter it unnoticed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../server/promclient.js';
import { batchedHistogram } from '../pkg/series.js';
import { collectProcessMetrics } from './process.js';
import { gauge } from '../../server/metrics.js';
import { dnsMetrics, kdnsVersion, setBuildInfo } from './metrics.js';
import { scrapeText } from './exposition.js';

/** A registry as `prometheus` sets one up (process metrics, plugin_enabled, DNS families, build info), with fixed counts. */
function servedRegistry(): Registry {
  const registry = new Registry();
  collectProcessMetrics(registry);
  gauge(registry, 'coredns_plugin_enabled', 'A metric that indicates whether a plugin is enabled on per server and zone basis.', ['server', 'zone', 'view', 'name']).set(
    { server: 'dns://:53', zone: '.', view: '', name: 'cache' },
    1,
  );
  const m = dnsMetrics(registry);
  setBuildInfo(registry);
  m.requests.cell(['dns://:53', 'cluster.local.', '', 'udp', '1', 'A']).inc();
  const duration = m.duration.cell(['dns://:53', 'cluster.local.', '', 'A']);
  for (const seconds of [0.0001, 0.1, 0.2, 100]) duration.observe(seconds);
  // A label value with every character the format escapes.
  m.requestSize.cell(['dns://:53', 'we"ird\\zone\n.', '', 'tcp']).observe(45);
  return registry;
}

/** The families of the text, in order, as [name, lines]. */
function families(text: string): Array<[string, string[]]> {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l !== ''))
    .map((lines) => [/^# HELP (\S+)/.exec(lines[0] ?? '')?.[1] ?? '', lines]);
}

const PROCESS_FAMILY = /^(process|nodejs)_/;

test('the DNS families render byte for byte as before', async () => {
  const text = await scrapeText(servedRegistry());
  const dns = families(text)
    .filter(([name]) => !PROCESS_FAMILY.test(name))
    .map(([, lines]) => lines.join('\n'))
    .join('\n\n');
  assert.equal(
    dns,
    `# HELP coredns_plugin_enabled A metric that indicates whether a plugin is enabled on per server and zone basis.
# TYPE coredns_plugin_enabled gauge
coredns_plugin_enabled{server="dns://:53",zone=".",view="",name="cache"} 1

# HELP coredns_dns_requests_total DNS requests received, by server block, zone, transport, address family and query type.
# TYPE coredns_dns_requests_total counter
coredns_dns_requests_total{server="dns://:53",zone="cluster.local.",view="",proto="udp",family="1",type="A"} 1

# HELP coredns_dns_do_requests_total DNS requests that had the DNSSEC OK bit set.
# TYPE coredns_dns_do_requests_total counter

# HELP coredns_dns_request_duration_seconds Seconds from receiving a request to having its response ready.
# TYPE coredns_dns_request_duration_seconds histogram
coredns_dns_request_duration_seconds_bucket{le="0.00025",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.0005",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.001",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.002",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.004",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.008",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.016",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.032",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.064",server="dns://:53",zone="cluster.local.",view="",type="A"} 1
coredns_dns_request_duration_seconds_bucket{le="0.128",server="dns://:53",zone="cluster.local.",view="",type="A"} 2
coredns_dns_request_duration_seconds_bucket{le="0.256",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="0.512",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="1.024",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="2.048",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="4.096",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="8.192",server="dns://:53",zone="cluster.local.",view="",type="A"} 3
coredns_dns_request_duration_seconds_bucket{le="+Inf",server="dns://:53",zone="cluster.local.",view="",type="A"} 4
coredns_dns_request_duration_seconds_sum{server="dns://:53",zone="cluster.local.",view="",type="A"} 100.3001
coredns_dns_request_duration_seconds_count{server="dns://:53",zone="cluster.local.",view="",type="A"} 4

# HELP coredns_dns_request_size_bytes Size of DNS requests in bytes, as received (before any plugin rewrote them).
# TYPE coredns_dns_request_size_bytes histogram
coredns_dns_request_size_bytes_bucket{le="0",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 0
coredns_dns_request_size_bytes_bucket{le="100",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="200",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="300",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="400",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="511",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="1023",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="2047",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="4095",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="8291",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="16000",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="32000",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="48000",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="64000",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_bucket{le="+Inf",server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1
coredns_dns_request_size_bytes_sum{server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 45
coredns_dns_request_size_bytes_count{server="dns://:53",zone="we\\"ird\\\\zone\\n.",view="",proto="tcp"} 1

# HELP coredns_dns_response_size_bytes Size of DNS responses in bytes, as sent to the client.
# TYPE coredns_dns_response_size_bytes histogram

# HELP coredns_dns_responses_total DNS responses sent, by response code and by the plugin that answered.
# TYPE coredns_dns_responses_total counter

# HELP coredns_build_info Always 1; the labels name the running kdns version and the Node.js version (in place of Go's).
# TYPE coredns_build_info gauge
coredns_build_info{version="${kdnsVersion()}",revision="",goversion="${process.version}"} 1`,
  );
  assert.ok(text.endsWith('} 1\n'), 'the text ends with one newline after the last sample');
});

test('the process families: names, help, types and label names, in this order', async () => {
  const text = await scrapeText(servedRegistry());
  const seen = families(text)
    .filter(([name]) => PROCESS_FAMILY.test(name))
    .map(([name, lines]) => {
      const help = (lines[0] ?? '').slice(`# HELP ${name} `.length);
      const type = (lines[1] ?? '').slice(`# TYPE ${name} `.length);
      // Some have no sample at a given moment (no active libuv request, say): then no label list.
      const labelLists = new Set(lines.slice(2).map((l) => [...l.matchAll(/([a-z_]+)="/g)].map((m) => m[1]).join(',')));
      return [name, help, type, [...labelLists]] as const;
    });
  const want: Array<[string, string, string, string]> = [
    ['process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', 'gauge', ''],
    ['process_resident_memory_bytes', 'Resident memory size in bytes.', 'gauge', ''],
    ['process_virtual_memory_bytes', 'Virtual memory size in bytes.', 'gauge', ''],
    ['process_heap_bytes', 'Process heap size in bytes.', 'gauge', ''],
    ['process_open_fds', 'Number of open file descriptors.', 'gauge', ''],
    ['process_max_fds', 'Maximum number of open file descriptors.', 'gauge', ''],
    ['nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', 'gauge', ''],
    ['nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', 'gauge', ''],
    ['nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', 'gauge', ''],
    ['nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', 'gauge', ''],
    ['nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.', 'gauge', ''],
    ['nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', 'gauge', ''],
    ['nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', 'gauge', ''],
    ['nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', 'gauge', ''],
    ['nodejs_active_resources', 'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.', 'gauge', 'type'],
    ['nodejs_active_resources_total', 'Total number of active resources.', 'gauge', ''],
    ['nodejs_active_handles', 'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.', 'gauge', 'type'],
    ['nodejs_active_handles_total', 'Total number of active handles.', 'gauge', ''],
    ['nodejs_active_requests', 'Number of active libuv requests grouped by request type. Every request type is C++ class name.', 'gauge', 'type'],
    ['nodejs_active_requests_total', 'Total number of active requests.', 'gauge', ''],
    ['nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', 'gauge', ''],
    ['nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', 'gauge', ''],
    ['nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', 'gauge', ''],
    ['nodejs_heap_space_size_total_bytes', 'Process heap space size total from Node.js in bytes.', 'gauge', 'space'],
    ['nodejs_heap_space_size_used_bytes', 'Process heap space size used from Node.js in bytes.', 'gauge', 'space'],
    ['nodejs_heap_space_size_available_bytes', 'Process heap space size available from Node.js in bytes.', 'gauge', 'space'],
    ['nodejs_version_info', 'Node.js version info.', 'gauge', 'version,major,minor,patch'],
    ['process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', 'counter', ''],
    ['process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', 'counter', ''],
    ['process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', 'counter', ''],
  ];
  assert.deepEqual(
    seen.map(([name, help, type]) => [name, help, type]),
    want.map(([name, help, type]) => [name, help, type]),
  );
  for (const [i, [name, , , labels]] of want.entries()) {
    const lists = seen[i]?.[3] ?? [];
    assert.ok(lists.length === 0 || (lists.length === 1 && lists[0] === labels), `${name}: samples with labels ${JSON.stringify(lists)}, want "${labels}"`);
  }
});

test('every sample line is NAME{LABELS} VALUE with a number for VALUE', async () => {
  const text = await scrapeText(servedRegistry());
  const bad = text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('# '))
    .filter((l) => !/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (-?[0-9.e+-]+|\+Inf|-Inf|Nan)$/.test(l));
  assert.deepEqual(bad, []);
});

test("registry.metrics() (prom-client's writer, used by the node cache's endpoint) writes the DNS families the same", async () => {
  const registry = servedRegistry();
  const dnsOnly = (text: string): string =>
    families(text)
      .filter(([name]) => !PROCESS_FAMILY.test(name))
      .map(([, lines]) => lines.join('\n'))
      .join('\n\n');
  assert.equal(dnsOnly(await registry.metrics()), dnsOnly(await scrapeText(registry)));
});

describe('a histogram family as text', () => {
  const cases: Array<{ what: string; labels: string[]; values: string[]; observe: number[]; want: string }> = [
    {
      what: 'no labels: braces only around le',
      labels: [],
      values: [],
      observe: [0.5, 3],
      want: '# HELP h_seconds help\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1"} 1\nh_seconds_bucket{le="2"} 1\nh_seconds_bucket{le="+Inf"} 2\nh_seconds_sum 3.5\nh_seconds_count 2\n',
    },
    {
      what: 'a series made but never observed shows zeros',
      labels: ['to'],
      values: ['10.0.0.1:53'],
      observe: [],
      want: '# HELP h_seconds help\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1",to="10.0.0.1:53"} 0\nh_seconds_bucket{le="2",to="10.0.0.1:53"} 0\nh_seconds_bucket{le="+Inf",to="10.0.0.1:53"} 0\nh_seconds_sum{to="10.0.0.1:53"} 0\nh_seconds_count{to="10.0.0.1:53"} 0\n',
    },
    {
      what: 'sums print as JavaScript prints them, unrounded',
      labels: ['to'],
      values: ['a'],
      observe: [0.1, 0.2],
      want: '# HELP h_seconds help\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1",to="a"} 2\nh_seconds_bucket{le="2",to="a"} 2\nh_seconds_bucket{le="+Inf",to="a"} 2\nh_seconds_sum{to="a"} 0.30000000000000004\nh_seconds_count{to="a"} 2\n',
    },
    {
      what: 'a value equal to a bound counts in that bucket (le is "less or equal")',
      labels: ['to'],
      values: ['a'],
      observe: [1, 2],
      want: '# HELP h_seconds help\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1",to="a"} 1\nh_seconds_bucket{le="2",to="a"} 2\nh_seconds_bucket{le="+Inf",to="a"} 2\nh_seconds_sum{to="a"} 3\nh_seconds_count{to="a"} 2\n',
    },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const registry = new Registry();
      const cell = batchedHistogram(registry, 'h_seconds', 'help', c.labels, [1, 2]).cell(c.values);
      for (const v of c.observe) cell.observe(v);
      assert.deepEqual([await scrapeText(registry), await registry.metrics()], [c.want, c.want]);
    });
  }
});
