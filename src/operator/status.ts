// The DNS resource's status, computed the way OpenShift's DNS operator computes it: Available,
// Progressing, Degraded and Upgradeable from the DaemonSets and the Service, plus two kdns
// conditions that say what of the spec was not applied (ConfigurationValid, PlacementValid).
// Pure: the clock comes in as `now`, the previous conditions as `previous`.

import type { ConditionStatus, DNSStatus, ManagementState, OperatorCondition } from '../lib/cluster/dnsresource.js';
import type { Toleration } from '../lib/cluster/types.js';
import type { DaemonSet } from './objects.js';
import type { Placement } from './placement.js';
import { selectorText } from './placement.js';

export interface StatusInput {
  clusterIP: string;
  clusterDomain: string;
  /** The DNS DaemonSet as it is now (with its status), if it exists. */
  dnsDaemonSet?: DaemonSet;
  nodeResolverDaemonSet?: DaemonSet;
  /** The placement the DaemonSet should have now (desired, or the kept one). */
  placement: Placement;
  managementState: ManagementState;
  /** One line per part of the spec that was not applied. */
  leftOut: string[];
  /** Why the requested placement was refused, when it was. */
  placementRefused?: string;
  /** The conditions the resource has now, whose transition times carry over when unchanged. */
  previous?: OperatorCondition[];
  now: Date;
}

type Draft = Omit<OperatorCondition, 'lastTransitionTime'>;

export function computeStatus(input: StatusInput): DNSStatus {
  const progressing = progressingCondition(input);
  const drafts: Draft[] = [
    degradedCondition(input, progressing.status === 'True'),
    progressing,
    availableCondition(input),
    upgradeableCondition(input.managementState),
    configurationCondition(input.leftOut),
    placementCondition(input.placementRefused),
  ];
  return { clusterIP: input.clusterIP, clusterDomain: input.clusterDomain, conditions: drafts.map((c) => stamp(c, input.previous, input.now)) };
}

/** Keeps the old transition time when nothing about the condition changed, as OpenShift does. */
function stamp(c: Draft, previous: OperatorCondition[] | undefined, now: Date): OperatorCondition {
  const old = previous?.find((p) => p.type === c.type);
  const same = old && old.status === c.status && old.reason === c.reason && old.message === c.message;
  return { ...c, lastTransitionTime: same ? old.lastTransitionTime : now.toISOString() };
}

const cond = (type: string, status: ConditionStatus, reason: string, message: string): Draft => ({ type, status, reason, message });

function availableCondition(s: StatusInput): Draft {
  const reasons: string[] = [];
  const messages: string[] = [];
  if (!s.dnsDaemonSet) {
    reasons.push('NoDaemonSet');
    messages.push('The DNS daemonset does not exist.');
  } else if ((s.dnsDaemonSet.status?.numberAvailable ?? 0) === 0) {
    reasons.push('NoDaemonSetPods');
    messages.push('The DNS daemonset has no pods available.');
  }
  if (!s.clusterIP) {
    reasons.push('NoService');
    messages.push('No IP address is assigned to the DNS service.');
  }
  if (reasons.length > 0) return cond('Available', 'False', reasons.join(''), messages.join('\n'));
  return cond('Available', 'True', 'AsExpected', 'The DNS daemonset has available pods, and the DNS service has a cluster IP address.');
}

function sameTolerations(a: readonly Toleration[], b: readonly Toleration[]): boolean {
  const key = (t: Toleration): string => JSON.stringify([t.key ?? '', t.operator ?? 'Equal', t.value ?? '', t.effect ?? '', t.tolerationSeconds ?? null]);
  return a.length === b.length && a.map(key).sort().join() === b.map(key).sort().join();
}

function sameSelector(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  return selectorText(Object.fromEntries(Object.entries(a).sort())) === selectorText(Object.fromEntries(Object.entries(b).sort()));
}

/**
 * A rollout in flight: the Service has no address yet, a DaemonSet is missing or its controller
 * has not observed the latest spec, pods are not all updated, or the placement is not yet the
 * desired one. Pods that are merely unavailable after a finished rollout are not progress but a
 * fault, which Degraded reports.
 */
function progressingCondition(s: StatusInput): Draft {
  const messages: string[] = [];
  if (!s.clusterIP) messages.push('No IP address is assigned to the DNS service.');
  const ds = s.dnsDaemonSet;
  if (!ds) messages.push('The DNS daemonset does not exist.');
  else {
    messages.push(...rolloutMessages(ds, 'DNS'));
    const have = ds.spec.template.spec;
    if (!sameSelector(have.nodeSelector ?? {}, s.placement.nodeSelector)) {
      messages.push(`Have DNS daemonset with node selector ${selectorText(have.nodeSelector ?? {})}, want ${selectorText(s.placement.nodeSelector)}.`);
    }
    if (!sameTolerations(have.tolerations ?? [], s.placement.tolerations)) messages.push('Have DNS daemonset with other tolerations than desired.');
  }
  if (!s.nodeResolverDaemonSet) messages.push('The node-resolver daemonset does not exist.');
  else messages.push(...rolloutMessages(s.nodeResolverDaemonSet, 'node-resolver'));
  if (messages.length > 0) return cond('Progressing', 'True', 'Reconciling', messages.join('\n'));
  return cond('Progressing', 'False', 'AsExpected', 'All DNS and node-resolver pods are up to date, and the DNS service has a cluster IP address.');
}

function rolloutMessages(ds: DaemonSet, what: string): string[] {
  const st = ds.status;
  const generation = ds.metadata.generation;
  if (st === undefined || (generation !== undefined && (st.observedGeneration ?? 0) < generation)) {
    return [`The ${what} daemonset controller has not yet observed the latest spec.`];
  }
  const want = st.desiredNumberScheduled;
  const updated = st.updatedNumberScheduled ?? 0;
  if (updated >= want) return [];
  return [`Have ${updated} up-to-date ${what} pods, want ${want}.`, `Have ${st.numberAvailable ?? 0} available ${what} pods, want ${want}.`];
}

/**
 * Degraded when more than 10% of the desired DNS pods are unavailable (or none is desired or
 * available, or the Service has no address) — but never while Progressing: a rollout with
 * maxSurge makes pods briefly unavailable by design, and reporting that as a fault would page
 * people for every config change.
 */
function degradedCondition(s: StatusInput, progressing: boolean): Draft {
  if (progressing) return cond('Degraded', 'False', 'Progressing', 'A rollout is in progress; degradation is judged once it settles.');
  const reasons: string[] = [];
  const messages: string[] = [];
  if (!s.clusterIP) {
    reasons.push('NoService');
    messages.push('No IP address is assigned to the DNS service.');
  }
  const st = s.dnsDaemonSet?.status;
  const want = st?.desiredNumberScheduled ?? 0;
  const have = st?.numberAvailable ?? 0;
  if (want === 0) {
    reasons.push('NoDNSPodsDesired');
    messages.push('No DNS pods are desired; this could mean all nodes are tainted or unschedulable.');
  } else if (have === 0) {
    reasons.push('NoDNSPodsAvailable');
    messages.push('No DNS pods are available.');
  } else if ((want - have) * 10 > want) {
    reasons.push('MaxUnavailableDNSPodsExceeded');
    messages.push(`Too many DNS pods are unavailable (${want - have} of ${want}, more than 10%).`);
  }
  if (reasons.length > 0) return cond('Degraded', 'True', reasons.join(''), messages.join('\n'));
  return cond('Degraded', 'False', 'AsExpected', 'Enough DNS pods are available, and the DNS service has a cluster IP address.');
}

function upgradeableCondition(state: ManagementState): Draft {
  if (state === 'Unmanaged') return cond('Upgradeable', 'False', 'OperatorUnmanaged', 'Cannot upgrade while managementState is Unmanaged.');
  return cond('Upgradeable', 'True', 'AsExpected', 'DNS Operator can be upgraded.');
}

function configurationCondition(leftOut: string[]): Draft {
  if (leftOut.length > 0) return cond('ConfigurationValid', 'False', 'InvalidEntries', `Parts of spec were not applied:\n${leftOut.join('\n')}`);
  return cond('ConfigurationValid', 'True', 'AsExpected', 'The whole spec is applied.');
}

function placementCondition(refused: string | undefined): Draft {
  if (refused !== undefined) return cond('PlacementValid', 'False', 'NoSchedulableNodes', `${refused}; the current placement is kept.`);
  return cond('PlacementValid', 'True', 'AsExpected', 'The DNS pods can be scheduled as requested.');
}

/** A request the API server refused: what was asked of which object ("Service kdns/dns-default"), HTTP status and its message. */
export interface ApiFailure {
  verb: 'apply' | 'read';
  object: string;
  code: number;
  message: string;
}

/**
 * The status with Degraded saying which requests failed and why, in the API server's words. A
 * refused request is a fault whatever the rollout is doing, so it overrides the pod-based answer.
 */
export function withApiFailures(status: DNSStatus, failures: readonly ApiFailure[], previous: OperatorCondition[] | undefined, now: Date): DNSStatus {
  if (failures.length === 0) return status;
  const message = failures.map((f) => `Failed to ${f.verb} ${f.object}: HTTP ${f.code}: ${f.message}`).join('\n');
  const degraded = stamp(cond('Degraded', 'True', 'APIRequestFailed', message), previous, now);
  return { ...status, conditions: status.conditions.map((c) => (c.type === 'Degraded' ? degraded : c)) };
}
