// The reconcile loop: read the DNS resource, the Nodes and what is applied now; render; write
// what changed; report the status. The same pass runs against a manifest directory or the
// Kubernetes API (a Backend each). A render that fails writes no object, so the last good ones
// stay; it only updates the status to say why.

import type { DNSResource, DNSStatus, OperatorCondition } from '../lib/cluster/dnsresource.js';
import { formatFieldError } from '../lib/cluster/field.js';
import type { Node } from '../lib/cluster/types.js';
import { describeLeftOut } from './config.js';
import type { OwnedObject } from './objects.js';
import { preferSameNodeSupported } from './objects.js';
import { render } from './render.js';
import type { CurrentObjects, RenderOptions } from './render.js';
import type { OperatorLog } from './log.js';
import { withApiFailures } from './status.js';
import type { ApiFailure } from './status.js';

export interface Inputs {
  /** The DNS resource named "default", when there is one (as read: not yet validated). */
  dns?: unknown;
  nodes?: Node[];
  current: CurrentObjects;
  /** Problems reading the inputs (a file that does not parse), reported but not fatal. */
  problems: string[];
  /** Reads the API server refused; the pass goes on without those inputs and reports them. */
  failures?: ApiFailure[];
  /**
   * The API server's version (/version's gitVersion) when the backend has one; "" when it could
   * not be read. Decides `trafficDistribution: PreferSameNode` (preferSameNodeSupported).
   */
  kubernetesVersion?: string;
}

export interface Backend {
  /** Human-readable name for logs ("directory /x", "API https://…"). */
  readonly name: string;
  read(): Promise<Inputs>;
  /**
   * Writes each object that differs from what is applied, each on its own: one refused write
   * does not keep the others from being written.
   */
  apply(objects: readonly OwnedObject[], current: CurrentObjects): Promise<ApplyResult>;
  /** Records `status` for `dns` (the resource as read, with the status it has now); returns whether it changed. */
  writeStatus(dns: DNSResource, status: DNSStatus): Promise<boolean>;
}

export interface ApplyResult {
  /** "Kind/name" of each object written. */
  written: string[];
  failed: ApiFailure[];
}

export type PassOutcome =
  | { kind: 'no-dns' }
  | { kind: 'rejected'; errors: string[] }
  | { kind: 'unmanaged' }
  | { kind: 'applied'; written: string[]; failed: ApiFailure[]; statusChanged: boolean };

export interface ReconcilerOptions {
  render: RenderOptions;
  log: (line: string) => void;
  now?: () => Date;
  /** The operator's levelled log: each pass sets its level from spec.operatorLogLevel. */
  operatorLog?: OperatorLog;
}

/**
 * Runs passes. Messages that describe a state (left-out entries, a refused placement) are logged
 * when they first appear or change, not on every pass.
 */
export class Reconciler {
  private lastReported = '';

  constructor(
    private readonly backend: Backend,
    private readonly o: ReconcilerOptions,
  ) {}

  async pass(followUp = false): Promise<PassOutcome> {
    const inputs = await this.backend.read();
    const now = (this.o.now ?? (() => new Date()))();
    const messages: string[] = [...inputs.problems];
    if (inputs.dns === undefined) {
      this.report([...messages, 'no DNS resource named "default": nothing to do']);
      return { kind: 'no-dns' };
    }
    const options = inputs.kubernetesVersion === undefined ? this.o.render : { ...this.o.render, preferSameNode: preferSameNodeSupported(inputs.kubernetesVersion) };
    if (inputs.kubernetesVersion !== undefined && options.preferSameNode === false) messages.push(`the API server (${inputs.kubernetesVersion || 'version unknown'}) is older than Kubernetes 1.34, which refuses trafficDistribution: PreferSameNode: the DNS Service goes without it`);
    const result = render({ dns: inputs.dns, ...(inputs.nodes ? { nodes: inputs.nodes } : {}), current: inputs.current, options, now });
    if (!result.ok) {
      const errors = result.errors.map(formatFieldError);
      this.report([...messages, ...errors.map((e) => `DNS resource rejected, the applied objects are kept: ${e}`)]);
      const dns = inputs.dns as DNSResource;
      if (dns?.metadata?.name === 'default') await this.backend.writeStatus(dns, rejectedStatus(dns.status, errors, now));
      return { kind: 'rejected', errors };
    }
    // First, so that this pass's own lines already follow the level the resource asks for.
    this.o.operatorLog?.setLevel(result.settings.operatorLogLevel);
    messages.push(...result.leftOut.map(describeLeftOut));
    if (result.placementRefused !== undefined) messages.push(`spec.nodePlacement refused, the current placement is kept: ${result.placementRefused}`);
    if (result.addressKept !== undefined) messages.push(result.addressKept);
    this.report(messages);
    if (result.managementState === 'Unmanaged') {
      // As OpenShift's DNS operator: Unmanaged leaves every object alone and still reports the
      // status. Removed and Force are reconciled as Managed there (it has no removal path for
      // cluster DNS, whose deletion would break every pod's lookups), and so they are here.
      const statusChanged = await this.backend.writeStatus(inputs.dns as DNSResource, result.status);
      this.debug(`pass: managementState is Unmanaged: no object written; status ${statusChanged ? 'updated' : 'unchanged'}`);
      return { kind: 'unmanaged' };
    }
    const applied = await this.backend.apply(result.objects, inputs.current);
    const written = applied.written;
    const failed = [...(inputs.failures ?? []), ...applied.failed];
    for (const w of written) this.o.log(`applied ${w}`);
    for (const f of failed) this.o.log(`${f.verb} ${f.object} failed: HTTP ${f.code}: ${f.message}`);
    for (const note of written.length > 0 ? result.notes : []) this.o.log(note);
    const dns = inputs.dns as DNSResource;
    const status = withApiFailures(result.status, failed, dns.status?.conditions, now);
    const statusChanged = await this.backend.writeStatus(dns, status);
    const unchanged = result.objects.length - written.length - applied.failed.length;
    this.debug(`pass: wrote ${written.length > 0 ? written.join(', ') : 'nothing'}; ${unchanged} object(s) already as desired; ${applied.failed.length} refused; status ${statusChanged ? 'updated' : 'unchanged'}`);
    // The Service was just created without an address: the next pass reads the one the API
    // server allocated, for the status and the node-resolver DaemonSet.
    if (result.clusterIP === undefined && written.some((w) => w.startsWith('Service/')) && !followUp) return this.pass(true);
    return { kind: 'applied', written, failed, statusChanged };
  }

  private debug(line: string): void {
    this.o.operatorLog?.debug(line);
  }

  private report(messages: string[]): void {
    const text = messages.join('\n');
    if (text === this.lastReported) return;
    this.lastReported = text;
    for (const m of messages) this.o.log(m);
  }
}

/** The previous conditions, with ConfigurationValid saying why nothing was applied. */
export function rejectedStatus(previous: DNSStatus | undefined, errors: string[], now: Date): DNSStatus {
  const message = `The DNS resource was rejected; the objects applied before are kept:\n${errors.join('\n')}`;
  const old = previous?.conditions?.find((c) => c.type === 'ConfigurationValid');
  const cond: OperatorCondition = {
    type: 'ConfigurationValid',
    status: 'False',
    reason: 'Rejected',
    message,
    lastTransitionTime: old && old.status === 'False' && old.reason === 'Rejected' && old.message === message ? old.lastTransitionTime : now.toISOString(),
  };
  const others = (previous?.conditions ?? []).filter((c) => c.type !== 'ConfigurationValid');
  return { clusterIP: previous?.clusterIP ?? '', clusterDomain: previous?.clusterDomain ?? '', conditions: [...others, cond] };
}

export interface LoopOptions {
  /** Wake-ups from a watch; each resolves a wait early. */
  changes: AsyncIterable<void>;
  /** A pass at least this often, even without a change (safety net for missed events). */
  resyncMs: number;
  signal: AbortSignal;
  /** After a pass that failed (or refused writes), retry after this, doubling up to retryMaxMs. */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

export const DEFAULT_RETRY_INITIAL_MS = 1000;
export const DEFAULT_RETRY_MAX_MS = 60_000;

/**
 * Runs a pass now, then after every change (debounced by the caller's iterable) or resync. A pass
 * that failed is retried with a doubling delay, during which changes wait (they are not lost):
 * a refused write is not hammered at the pace of Node heartbeats.
 */
export async function runReconcileLoop(r: Reconciler, o: LoopOptions, log: (line: string) => void): Promise<void> {
  const iterator = o.changes[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<void>> | undefined;
  const initial = o.retryInitialMs ?? DEFAULT_RETRY_INITIAL_MS;
  const max = Math.min(o.retryMaxMs ?? DEFAULT_RETRY_MAX_MS, o.resyncMs);
  let retryMs = initial;
  while (!o.signal.aborted) {
    let failed = false;
    try {
      const outcome = await r.pass();
      failed = outcome.kind === 'applied' && outcome.failed.length > 0;
    } catch (e) {
      failed = true;
      log(`reconcile failed, retrying in ${retryMs} ms: ${(e as Error).message}`);
    }
    pending ??= iterator.next();
    if (failed) {
      await sleep(retryMs, o.signal);
      retryMs = Math.min(retryMs * 2, max);
      continue;
    }
    retryMs = initial;
    const woke = await Promise.race([pending.then(() => 'change' as const), sleep(o.resyncMs, o.signal).then(() => 'timer' as const)]);
    if (woke === 'change') pending = undefined;
  }
  await iterator.return?.();
}

/** Resolves after `ms`, or at once when `signal` aborts (leaving no listener behind). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
