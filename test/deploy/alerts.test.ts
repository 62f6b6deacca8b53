// The alerts shipped in deploy/components/operator-alerts, evaluated against a real `kdns serve`:
// its /metrics is scraped twice around some traffic, and each rule's expression is evaluated over
// the two scrapes (test/util/promql.ts) as Prometheus would. Every metric a rule names must be in
// the scrape (the evaluator throws otherwise), a healthy server fires nothing, and each fault a
// rule is about makes that rule, and only the rules about it, fire. Faults are injected into the
// kdns process through a module loaded before it starts, triggered by files the test creates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { dig } from '../util/dig.js';
import { startKdns } from '../util/kdns.js';
import { freePort, waitFor } from '../util/net.js';
import { parseExposition } from '../util/prom.js';
import type { Sample } from '../util/prom.js';
import { evaluate } from '../util/promql.js';
import { missing } from '../util/upstream.js';
import { repoRoot } from '../util/deploy.js';

interface Rule {
  alert: string;
  expr: string;
}
const ruleFile = parse(readFileSync(`${repoRoot}deploy/components/operator-alerts/prometheusrule.yaml`, 'utf8')) as { spec: { groups: Array<{ rules: Rule[] }> } };
const rules = ruleFile.spec.groups.flatMap((g) => g.rules);

test('the rules are the three alerts OpenShift ships with its DNS', () => {
  assert.deepEqual(rules.map((r) => r.alert), ['CoreDNSPanicking', 'CoreDNSHealthCheckSlow', 'CoreDNSErrorsHigh']);
});

/** What Prometheus adds to every sample of a target: the rules group by these. */
const TARGET = { instance: '10.128.0.5:9153', namespace: 'kdns', job: 'dns-default' };

const skip = missing('dig', 'bind9-dnsutils');

test('the alerts against a real kdns: nothing fires while healthy, each fault fires its alert', { skip }, async () => {
  const [port, metrics, health] = await Promise.all([freePort(), freePort(), freePort()]);
  const dir = mkdtempSync(join(tmpdir(), 'kdns-alerts-'));
  const corefile = join(dir, 'Corefile');
  writeFileSync(
    corefile,
    [
      `.:${port} {`,
      '  bind 127.0.0.1',
      `  prometheus 127.0.0.1:${metrics}`,
      `  health 127.0.0.1:${health}`,
      '  template IN ANY fail.test {',
      '    rcode SERVFAIL',
      '  }',
      '  template IN A ok.test {',
      '    answer "{{ .Name }} 60 IN A 192.0.2.1"',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  // The faults: a throw nothing catches (what coredns_panics_total counts), and an event loop
  // held 300 ms at a time for 6 s (what makes the health self-check slow).
  const panicFile = join(dir, 'panic');
  const slowFile = join(dir, 'slow');
  const inject = `data:text/javascript,${encodeURIComponent(
    `import { existsSync, unlinkSync } from 'node:fs';
     setInterval(() => {
       if (existsSync(${JSON.stringify(panicFile)})) { unlinkSync(${JSON.stringify(panicFile)}); setTimeout(() => { throw new Error('injected fault'); }, 1); }
       if (existsSync(${JSON.stringify(slowFile)})) {
         unlinkSync(${JSON.stringify(slowFile)});
         const until = Date.now() + 6000;
         const hold = setInterval(() => { const end = Date.now() + 300; while (Date.now() < end); if (Date.now() > until) clearInterval(hold); }, 10);
       }
     }, 50).unref();`,
  )}`;
  const kdns = startKdns(['serve', '--conf', corefile], { nodeArgs: ['--import', inject], allowPanics: true });
  const scrape = async (): Promise<{ at: number; samples: Sample[] }> => {
    const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    return { at: Date.now(), samples: parseExposition(text).map((s) => ({ ...s, labels: { ...s.labels, ...TARGET } })) };
  };
  const firing = (a: { at: number; samples: Sample[] }, b: { at: number; samples: Sample[] }): string[] =>
    rules.filter((r) => evaluate(r.expr, { earlier: a.samples, later: b.samples, seconds: (b.at - a.at) / 1000 }).length > 0).map((r) => r.alert);
  const queries = async (name: string, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await dig(name, 'A', { port });
  };
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${metrics}/metrics`).catch(() => undefined))?.status === 200, 20_000, 50);
    // Both rcodes and a few self-checks exist before the first scrape: a series Prometheus sees
    // for the first time has no rate yet.
    await queries('a.ok.test', 1);
    await queries('a.fail.test', 1);
    await waitFor(async () => (await scrape()).samples.some((s) => s.name === 'coredns_health_request_duration_seconds_count' && s.value >= 2), 10_000, 100);

    const first = await scrape();
    await queries('b.ok.test', 20);
    await new Promise((r) => setTimeout(r, 2000));
    const healthy = await scrape();
    assert.deepEqual(firing(first, healthy), [], 'a healthy server fires nothing');

    await queries('b.fail.test', 5);
    await queries('c.ok.test', 5);
    const servfails = await scrape();
    assert.deepEqual(firing(healthy, servfails), ['CoreDNSErrorsHigh'], 'half the answers SERVFAIL');

    writeFileSync(panicFile, '');
    await waitFor(() => !existsSync(panicFile) && kdns.output().includes('injected fault'), 10_000, 50);
    await new Promise((r) => setTimeout(r, 200));
    const panicked = await scrape();
    assert.deepEqual(firing(servfails, panicked), ['CoreDNSPanicking'], 'one recovered error');

    writeFileSync(slowFile, '');
    await new Promise((r) => setTimeout(r, 6500));
    const slow = await scrape();
    assert.deepEqual(firing(panicked, slow), ['CoreDNSHealthCheckSlow'], 'self-checks held back by a busy event loop');
  } finally {
    await kdns.stop();
  }
});
