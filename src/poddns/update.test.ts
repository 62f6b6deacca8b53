// Pod updates as the API server judges them (ValidatePodUpdate): what may change (images,
// activeDeadlineSeconds down, tolerations added, scheduling gates removed, a gated pod's
// nodeSelector extended, terminationGracePeriodSeconds from negative to 1) and the errors for
// the rest, printed as `kdns validate` prints them. Then `kdns validate --old` end to end,
// in-process through commander.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { formatFieldError } from '../lib/cluster/field.js';
import { register } from '../cli/validate.js';
import { runCli } from '../../test/util/cli.js';
import type { CliRun } from '../../test/util/cli.js';
import { validatePodUpdate } from './update.js';

const FORBIDDEN =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

type Json = Record<string, unknown>;

const TOLERATION = { key: 'dedicated', operator: 'Equal', value: 'dns', effect: 'NoSchedule' };
const GATED = { schedulingGates: [{ name: 'wait' }] };

/** A stored Pod with `spec` over a one-container base. */
function pod(spec: Json = {}): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'ns1' }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }], ...spec } };
}

const rows: Array<{ what: string; old: Json; new: Json; errors: string[] }> = [
  { what: 'nothing changed', old: pod(), new: pod(), errors: [] },
  { what: 'a new image', old: pod(), new: pod({ containers: [{ name: 'c', image: 'nginx:1.28', ports: [{ containerPort: 80 }] }] }), errors: [] },
  { what: 'empty values are as absent', old: pod({ nodeSelector: {} }), new: pod({ tolerations: [], hostname: '' }), errors: [] },
  {
    what: 'a changed port: Forbidden, with the field',
    old: pod(),
    new: pod({ containers: [{ name: 'c', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] }),
    errors: [`${FORBIDDEN}\n- spec.containers[0].ports[0].containerPort: 80\n+ spec.containers[0].ports[0].containerPort: 8080`],
  },
  {
    what: 'a changed dnsPolicy, and an image change beside it left out of the diff',
    old: pod({ dnsPolicy: 'ClusterFirst' }),
    new: pod({ dnsPolicy: 'Default', containers: [{ name: 'c', image: 'nginx:1.28', ports: [{ containerPort: 80 }] }] }),
    errors: [`${FORBIDDEN}\n- spec.dnsPolicy: "ClusterFirst"\n+ spec.dnsPolicy: "Default"`],
  },
  {
    what: 'an added dnsConfig and a removed nodeName',
    old: pod({ nodeName: 'n1' }),
    new: pod({ dnsConfig: { nameservers: ['1.2.3.4'] } }),
    errors: [`${FORBIDDEN}\n- spec.nodeName: "n1"\n+ spec.dnsConfig: {"nameservers":["1.2.3.4"]}`],
  },
  {
    what: 'more than ten changed fields: the rest counted',
    old: pod({ nodeSelector: Object.fromEntries([...'abcdefghijkl'].map((k) => [k, '1'])) }),
    new: pod({ nodeSelector: Object.fromEntries([...'abcdefghijkl'].map((k) => [k, '2'])) }),
    errors: [`${FORBIDDEN}\n${[...'abcdefghij'].map((k) => `- spec.nodeSelector.${k}: "1"\n+ spec.nodeSelector.${k}: "2"`).join('\n')}\n… and 2 more changed fields`],
  },
  { what: 'an added container', old: pod(), new: pod({ containers: [{ name: 'c', image: 'nginx' }, { name: 'd', image: 'busybox' }] }), errors: ['spec.containers: Forbidden: pod updates may not add or remove containers'] },
  { what: 'a removed init container', old: pod({ initContainers: [{ name: 'i', image: 'busybox' }] }), new: pod(), errors: ['spec.initContainers: Forbidden: pod updates may not add or remove containers'] },
  { what: 'an empty image', old: pod(), new: pod({ containers: [{ name: 'c', image: '', ports: [{ containerPort: 80 }] }] }), errors: ['spec.containers[0].image: Required value'] },
  {
    what: 'an image with a space',
    old: pod(),
    new: pod({ containers: [{ name: 'c', image: ' nginx', ports: [{ containerPort: 80 }] }] }),
    errors: ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'],
  },
  { what: 'activeDeadlineSeconds set', old: pod(), new: pod({ activeDeadlineSeconds: 30 }), errors: [] },
  { what: 'activeDeadlineSeconds lowered', old: pod({ activeDeadlineSeconds: 30 }), new: pod({ activeDeadlineSeconds: 10 }), errors: [] },
  { what: 'activeDeadlineSeconds raised', old: pod({ activeDeadlineSeconds: 10 }), new: pod({ activeDeadlineSeconds: 20 }), errors: ['spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value'] },
  { what: 'activeDeadlineSeconds removed', old: pod({ activeDeadlineSeconds: 10 }), new: pod(), errors: ['spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value'] },
  { what: 'activeDeadlineSeconds out of range', old: pod(), new: pod({ activeDeadlineSeconds: 3_000_000_000 }), errors: ['spec.activeDeadlineSeconds: Invalid value: 3000000000: must be between 0 and 2147483647, inclusive'] },
  { what: 'a toleration added', old: pod({ tolerations: [TOLERATION] }), new: pod({ tolerations: [TOLERATION, { key: 'x', operator: 'Exists' }] }), errors: [] },
  { what: 'a toleration’s seconds changed', old: pod({ tolerations: [{ ...TOLERATION, tolerationSeconds: 5 }] }), new: pod({ tolerations: [{ ...TOLERATION, tolerationSeconds: 9 }] }), errors: [] },
  { what: 'a toleration changed', old: pod({ tolerations: [TOLERATION] }), new: pod({ tolerations: [{ ...TOLERATION, value: 'web' }] }), errors: ['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'] },
  { what: 'a scheduling gate removed', old: pod(GATED), new: pod(), errors: [] },
  { what: 'a scheduling gate added', old: pod(GATED), new: pod({ schedulingGates: [{ name: 'wait' }, { name: 'more' }] }), errors: ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'more'"] },
  { what: 'a gated pod’s nodeSelector extended', old: pod({ ...GATED, nodeSelector: { a: 'b' } }), new: pod({ ...GATED, nodeSelector: { a: 'b', c: 'd' } }), errors: [] },
  {
    what: 'a gated pod’s nodeSelector changed',
    old: pod({ ...GATED, nodeSelector: { a: 'b' } }),
    new: pod({ ...GATED, nodeSelector: { a: 'z', c: 'd' } }),
    errors: ['spec.nodeSelector: Invalid value: {"a":"z","c":"d"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)'],
  },
  {
    what: 'an ungated pod’s nodeSelector extended',
    old: pod({ nodeSelector: { a: 'b' } }),
    new: pod({ nodeSelector: { a: 'b', c: 'd' } }),
    errors: [`${FORBIDDEN}\n+ spec.nodeSelector.c: "d"`],
  },
  { what: 'terminationGracePeriodSeconds from negative to 1', old: pod({ terminationGracePeriodSeconds: -1 }), new: pod({ terminationGracePeriodSeconds: 1 }), errors: [] },
  {
    what: 'terminationGracePeriodSeconds otherwise',
    old: pod({ terminationGracePeriodSeconds: 30 }),
    new: pod({ terminationGracePeriodSeconds: 1 }),
    errors: [`${FORBIDDEN}\n- spec.terminationGracePeriodSeconds: 30\n+ spec.terminationGracePeriodSeconds: 1`],
  },
];

for (const row of rows) {
  test(`pod update: ${row.what}`, () => {
    assert.deepEqual(validatePodUpdate(row.new, row.old).map(formatFieldError), row.errors);
  });
}

// ---- kdns validate --old ---------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'kdns-pod-update-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const manifest = (spec: string, kind = 'Pod'): string =>
  kind === 'Pod'
    ? `apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: ns1}\nspec:\n${spec}`
    : `apiVersion: apps/v1\nkind: ${kind}\nmetadata: {name: web, namespace: ns1}\nspec:\n  template:\n    spec:\n${spec.replace(/^/gm, '    ')}`;
const STORED = file('stored.yaml', manifest('  dnsPolicy: ClusterFirst\n  containers: [{name: c, image: "nginx:1.27"}]\n'));
const NEW_IMAGE = file('new-image.yaml', manifest('  dnsPolicy: ClusterFirst\n  containers: [{name: c, image: "nginx:1.28"}]\n'));
const NEW_POLICY = file('new-policy.yaml', manifest('  dnsPolicy: Default\n  containers: [{name: c, image: "nginx:1.27"}]\n'));
const STORED_DEPLOYMENT = file('stored-deploy.yaml', manifest('  dnsPolicy: ClusterFirst\n  containers: [{name: c, image: "nginx:1.27"}]\n', 'Deployment'));
const STORED_GATED = file('stored-gated.yaml', manifest('  schedulingGates: [{name: wait}]\n  nodeSelector: {a: b}\n  containers: [{name: c, image: "nginx:1.27"}]\n'));
const NEW_GATED = file('new-gated.yaml', manifest('  schedulingGates: [{name: wait}]\n  nodeSelector: {a: z}\n  containers: [{name: c, image: "nginx:1.27"}]\n'));
const NEW_DEPLOYMENT = file('new-deploy.yaml', manifest('  dnsPolicy: Default\n  containers: [{name: c, image: "nginx:1.27"}]\n', 'Deployment'));

function kdns(args: string[]): Promise<CliRun> {
  return runCli([register], ['validate', ...args]);
}

const cliRows: Array<{ what: string; args: string[]; code: number; out: string }> = [
  { what: 'a Pod whose image changes is a valid update', args: ['--old', STORED, NEW_IMAGE], code: 0, out: '' },
  {
    what: 'a Pod whose dnsPolicy changes is refused as the API server refuses it',
    args: ['--old', STORED, NEW_POLICY],
    code: 1,
    out: `Pod/web: ${FORBIDDEN}\n- spec.dnsPolicy: "ClusterFirst"\n+ spec.dnsPolicy: "Default"\n`,
  },
  { what: 'the same change without --old is a valid Pod', args: [NEW_POLICY], code: 0, out: '' },
  { what: 'a Deployment’s pod template may change', args: ['--old', STORED_DEPLOYMENT, NEW_DEPLOYMENT], code: 0, out: '' },
];

for (const row of cliRows) {
  test(`kdns validate --old: ${row.what}`, async () => {
    const r = await kdns(row.args);
    assert.deepEqual({ code: r.code, out: r.out }, { code: row.code, out: row.out }, r.err);
  });
}

test('kdns validate --old -o json: a map value is the map itself', async () => {
  const r = await kdns(['--old', STORED_GATED, NEW_GATED, '-o', 'json']);
  const report = JSON.parse(r.out) as { valid: boolean; objects: Array<{ errors: unknown[] }> };
  assert.deepEqual([r.code, report.valid, report.objects[0]?.errors], [
    1,
    false,
    [
      {
        field: 'spec.nodeSelector',
        reason: 'Invalid value',
        value: { a: 'z' },
        detail: 'only additions to spec.nodeSelector are allowed (no mutations or deletions)',
        message: 'spec.nodeSelector: Invalid value: {"a":"z"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)',
      },
    ],
  ]);
});
