// What the operator does as OpenShift's DNS operator does (openshift/cluster-dns-operator): the
// Service's trafficDistribution, the DaemonSet's minReadySeconds, the Corefile's bufsize,
// managementState, and operatorLogLevel changing the operator's own log while it runs. Each case
// names one behaviour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { DNSResource, DNSStatus } from '../lib/cluster/dnsresource.js';
import type { Service } from '../lib/cluster/types.js';
import { OperatorLog } from './log.js';
import type { OperatorLogLevel } from './log.js';
import type { DaemonSet, OwnedObject } from './objects.js';
import { preferSameNodeSupported } from './objects.js';
import { Reconciler } from './reconcile.js';
import type { ApplyResult, Backend, Inputs, PassOutcome } from './reconcile.js';
import { render } from './render.js';
import type { Rendered, RenderOptions } from './render.js';

const now = new Date('2024-05-01T12:00:00Z');
const dns = (spec: Record<string, unknown> = {}): DNSResource => ({ apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec }) as DNSResource;

function rendered(spec: Record<string, unknown> = {}, options: RenderOptions = {}): Rendered {
  const r = render({ dns: dns(spec), options, now });
  if (!r.ok) throw new Error(`render refused: ${JSON.stringify(r.errors)}`);
  return r;
}
const objectOf = <K extends OwnedObject['kind']>(r: Rendered, kind: K, name: string): Extract<OwnedObject, { kind: K }> => {
  const o = r.objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o as Extract<OwnedObject, { kind: K }>;
};

// --- The Service: trafficDistribution -------------------------------------------------------

const serviceCases: Array<{ name: string; options: RenderOptions; want: string | undefined }> = [
  { name: 'by default the DNS Service prefers the pod on the client\'s node', options: {}, want: 'PreferSameNode' },
  { name: 'for an API server that would refuse it, the Service goes without', options: { preferSameNode: false }, want: undefined },
];
for (const c of serviceCases) {
  test(`Service trafficDistribution: ${c.name}`, () => {
    const svc = objectOf(rendered({}, c.options), 'Service', 'dns-default') as Service;
    assert.equal(svc.spec.trafficDistribution, c.want);
  });
}

const versionCases: Array<[string | undefined, boolean]> = [
  ['v1.29.14', false], // the field is unknown
  ['v1.30.0', false], // ServiceTrafficDistribution alpha, off: dropped
  ['v1.32.3', false], // only PreferClose accepted: 422
  ['v1.33.1', false], // PreferSameTrafficDistribution alpha, off: 422
  ['v1.33.1+k3s1', false],
  ['v1.34.0', true], // beta, on by default
  ['v1.35.2-eks-1234', true],
  ['v2.0.0', true],
  ['', false], // /version could not be read
  ['unknown', false],
  [undefined, false],
];
for (const [version, want] of versionCases) {
  test(`preferSameNodeSupported(${JSON.stringify(version)}) = ${want}`, () => {
    assert.equal(preferSameNodeSupported(version), want);
  });
}

// --- The DNS DaemonSet ---------------------------------------------------------------------

test('DaemonSet: minReadySeconds is 9, three periods of the readiness probe, as OpenShift sets it', () => {
  const ds = objectOf(rendered(), 'DaemonSet', 'dns-default') as DaemonSet;
  assert.equal(ds.spec.minReadySeconds, 9);
  assert.equal(ds.spec.template.spec.containers[0]?.readinessProbe?.periodSeconds, 3);
});

test('DaemonSet: the dns container requests the memory deploy/coredns requests (72Mi, docs/memory.md)', () => {
  const ds = objectOf(rendered(), 'DaemonSet', 'dns-default') as DaemonSet;
  const deployment = parse(readFileSync(new URL('../../deploy/coredns/deployment.yaml', import.meta.url), 'utf8')) as { spec: { template: { spec: { containers: Array<{ resources: { requests: Record<string, string> } }> } } } };
  const coredns = deployment.spec.template.spec.containers[0]?.resources.requests['memory'];
  assert.equal(ds.spec.template.spec.containers[0]?.resources?.requests?.['memory'], '72Mi');
  assert.equal(coredns, '72Mi');
});

// --- The Corefile --------------------------------------------------------------------------

test('Corefile: every server block caps EDNS0 at 1232 bytes, as OpenShift renders it', () => {
  const r = rendered({ servers: [{ name: 'corp', zones: ['corp.example.com'], forwardPlugin: { upstreams: ['10.0.0.53'] } }] });
  assert.deepEqual([...r.corefile.matchAll(/^\s*bufsize (\d+)$/gm)].map((m) => m[1]), ['1232', '1232']);
});

// --- A backend in memory, for whole passes -------------------------------------------------

class MemoryBackend implements Backend {
  readonly name = 'memory';
  applies = 0;
  applied: OwnedObject[] = [];
  status: DNSStatus | undefined;
  constructor(
    public resource: DNSResource,
    private readonly kubernetesVersion?: string,
  ) {}
  read(): Promise<Inputs> {
    return Promise.resolve({ dns: { ...this.resource, ...(this.status ? { status: this.status } : {}) }, current: {}, problems: [], ...(this.kubernetesVersion === undefined ? {} : { kubernetesVersion: this.kubernetesVersion }) });
  }
  apply(objects: readonly OwnedObject[]): Promise<ApplyResult> {
    this.applies++;
    this.applied = [...objects];
    return Promise.resolve({ written: objects.map((o) => `${o.kind}/${o.metadata.name}`), failed: [] });
  }
  writeStatus(_dns: DNSResource, status: DNSStatus): Promise<boolean> {
    const changed = JSON.stringify(status) !== JSON.stringify(this.status);
    this.status = status;
    return Promise.resolve(changed);
  }
}

function reconciler(backend: Backend, lines: string[] = []): { r: Reconciler; log: OperatorLog } {
  const log = new OperatorLog((l) => lines.push(l));
  return { r: new Reconciler(backend, { render: {}, log: log.info, operatorLog: log, now: () => now }), log };
}

// --- managementState -----------------------------------------------------------------------

const managementCases: Array<{ state: string; outcome: PassOutcome['kind']; applies: number; upgradeable: string }> = [
  { state: 'Managed', outcome: 'applied', applies: 1, upgradeable: 'True/AsExpected' },
  // OpenShift's operator reconciles every state but Unmanaged: Removed and Force are Managed.
  { state: 'Removed', outcome: 'applied', applies: 1, upgradeable: 'True/AsExpected' },
  { state: 'Force', outcome: 'applied', applies: 1, upgradeable: 'True/AsExpected' },
  { state: 'Unmanaged', outcome: 'unmanaged', applies: 0, upgradeable: 'False/OperatorUnmanaged' },
];
for (const c of managementCases) {
  test(`managementState ${c.state}: ${c.applies ? 'the objects are applied' : 'no object is written'}, Upgradeable ${c.upgradeable}`, async () => {
    const b = new MemoryBackend(dns({ managementState: c.state }));
    const outcome = await reconciler(b).r.pass();
    assert.equal(outcome.kind, c.outcome);
    assert.equal(b.applies, c.applies);
    const up = b.status?.conditions?.find((x) => x.type === 'Upgradeable');
    assert.equal(`${up?.status}/${up?.reason}`, c.upgradeable);
  });
}

// --- trafficDistribution from the API server's version ---------------------------------------

const apiVersionCases: Array<{ version: string | undefined; want: string | undefined; logged: boolean }> = [
  { version: 'v1.34.1', want: 'PreferSameNode', logged: false },
  { version: 'v1.33.4', want: undefined, logged: true },
  { version: '', want: undefined, logged: true },
  // A directory (and render) has no API server: the Service is written as for a current one.
  { version: undefined, want: 'PreferSameNode', logged: false },
];
for (const c of apiVersionCases) {
  test(`pass against API server ${JSON.stringify(c.version)}: trafficDistribution ${c.want ?? 'absent'}${c.logged ? ', and the log says why' : ''}`, async () => {
    const b = new MemoryBackend(dns(), c.version);
    const lines: string[] = [];
    await reconciler(b, lines).r.pass();
    const svc = b.applied.find((o) => o.kind === 'Service') as Service | undefined;
    assert.equal(svc?.spec.trafficDistribution, c.want);
    assert.equal(lines.some((l) => l.includes('older than Kubernetes 1.34')), c.logged);
  });
}

// --- operatorLogLevel ----------------------------------------------------------------------

const levelCases: Array<{ level: OperatorLogLevel; debug: boolean; trace: boolean }> = [
  { level: 'Normal', debug: false, trace: false },
  { level: 'Debug', debug: true, trace: false },
  { level: 'Trace', debug: true, trace: true },
];
for (const c of levelCases) {
  test(`operatorLogLevel ${c.level}: debug lines ${c.debug ? 'shown' : 'hidden'}, trace lines ${c.trace ? 'shown' : 'hidden'}`, async () => {
    const lines: string[] = [];
    const b = new MemoryBackend(dns({ operatorLogLevel: c.level }));
    const { r, log } = reconciler(b, lines);
    await r.pass();
    log.trace('a watch event');
    assert.equal(log.level, c.level);
    assert.equal(lines.some((l) => l.startsWith('debug: pass: wrote ')), c.debug);
    assert.equal(lines.includes('trace: a watch event'), c.trace);
  });
}

test('operatorLogLevel: a change of the resource changes the level at the next pass, logged once', async () => {
  const lines: string[] = [];
  const b = new MemoryBackend(dns({ operatorLogLevel: 'Debug' }));
  const { r, log } = reconciler(b, lines);
  await r.pass();
  await r.pass();
  b.resource = dns({ operatorLogLevel: 'Normal' });
  lines.length = 0;
  await r.pass();
  await r.pass();
  assert.equal(log.level, 'Normal');
  assert.deepEqual(lines.filter((l) => l.startsWith('operator log level') || l.startsWith('debug:')), ['operator log level Debug → Normal (spec.operatorLogLevel)']);
});

test('operatorLogLevel: an invalid value leaves the log at Normal and says so', async () => {
  const lines: string[] = [];
  const b = new MemoryBackend(dns({ operatorLogLevel: 'Verbose' }));
  const { r, log } = reconciler(b, lines);
  await r.pass();
  assert.equal(log.level, 'Normal');
  assert.ok(lines.some((l) => l.startsWith('spec.operatorLogLevel: Normal is used')), lines.join('\n'));
});
