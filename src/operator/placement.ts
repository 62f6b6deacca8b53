// Where DNS pods run, and whether a placement can run them anywhere at all. A placement that
// selects no node would take cluster DNS down on apply, so the operator checks it against the
// node list first and keeps the current placement when it fails.

import type { Node, Taint, Toleration } from '../lib/cluster/types.js';
import type { PlacementSpec } from './config.js';

export interface Placement {
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
}

export const DEFAULT_NODE_SELECTOR: Readonly<Record<string, string>> = { 'kubernetes.io/os': 'linux' };
/** Lets DNS run on control-plane nodes too, so a cluster whose workers are all down still resolves. */
export const CONTROL_PLANE_TOLERATION: Readonly<Toleration> = { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' };

/**
 * What the DaemonSet controller adds to every DaemonSet pod (pkg/controller/daemon/util), so a
 * node carrying only these taints still gets its DNS pod.
 */
export const DAEMONSET_AUTO_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The spec's placement with the defaults filled in: each part replaces its default only when set. */
export function desiredPlacement(spec: PlacementSpec): Placement {
  const selector = spec.nodeSelector && Object.keys(spec.nodeSelector).length > 0 ? spec.nodeSelector : DEFAULT_NODE_SELECTOR;
  const tolerations = spec.tolerations && spec.tolerations.length > 0 ? spec.tolerations : [CONTROL_PLANE_TOLERATION];
  return { nodeSelector: { ...selector }, tolerations: tolerations.map((t) => ({ ...t })) };
}

/** Kubernetes's ToleratesTaint: effect (empty = any), key (empty with Exists = any), then operator. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (!t.key && t.operator !== 'Exists') return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The node's labels hold every key of the selector with the same value. */
export function matchesSelector(labels: Readonly<Record<string, string>> | undefined, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export interface NodeVerdict {
  node: string;
  eligible: boolean;
  /** Why not, in words: "label kubernetes.io/os=linux missing", "taint dns-only=true:NoSchedule not tolerated", "unschedulable". */
  reasons: string[];
}

function taintText(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

/** Whether a DNS pod with `placement` can be scheduled on `node`, and why not. */
export function judgeNode(node: Node, placement: Placement): NodeVerdict {
  const reasons: string[] = [];
  if (node.spec?.unschedulable) reasons.push('unschedulable');
  for (const [k, v] of Object.entries(placement.nodeSelector)) {
    const have = node.metadata.labels?.[k];
    if (have !== v) reasons.push(have === undefined ? `label ${k}=${v} missing` : `label ${k}=${have}, selector wants ${v}`);
  }
  const tolerations = [...placement.tolerations, ...DAEMONSET_AUTO_TOLERATIONS];
  for (const taint of node.spec?.taints ?? []) {
    // PreferNoSchedule only steers the scheduler; it never keeps a pod off a node.
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!tolerations.some((t) => toleratesTaint(t, taint))) reasons.push(`taint ${taintText(taint)} not tolerated`);
  }
  return { node: node.metadata.name, eligible: reasons.length === 0, reasons };
}

export interface PlacementCheck {
  ok: boolean;
  verdicts: NodeVerdict[];
}

export function checkPlacement(placement: Placement, nodes: readonly Node[]): PlacementCheck {
  const verdicts = nodes.map((n) => judgeNode(n, placement));
  return { ok: verdicts.some((v) => v.eligible), verdicts };
}

/** `{a=b, c=d}` as people read selectors. */
export function selectorText(selector: Readonly<Record<string, string>>): string {
  return `{${Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}}`;
}

/** One line that says why a placement was refused and which nodes were considered. */
export function describeRefusal(placement: Placement, check: PlacementCheck): string {
  const considered = check.verdicts.length === 0 ? 'none (the node list is empty)' : check.verdicts.map((v) => `${v.node} (${v.reasons.join('; ')})`).join(', ');
  return `nodePlacement selects no schedulable node: nodeSelector ${selectorText(placement.nodeSelector)} with ${placement.tolerations.length} toleration(s); nodes considered: ${considered}`;
}
