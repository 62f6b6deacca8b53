// Cluster sources outlive config reloads and are shared by every kubernetes block that reads
// the same place: a reload must not re-read 10,000 Services, and two blocks must not keep two
// copies of the cluster. Reference counted: the last block to let go stops the source.

import { DirectorySource, maxFileBytesFrom } from '../../lib/cluster/directory.js';
import { MANIFEST_KINDS } from '../../lib/cluster/objectcheck.js';
import type { ClusterSource, SourceLog } from '../../lib/cluster/source.js';
import { ClusterStore, type StoreDelta } from '../../lib/cluster/store.js';
import type { ApiRequestMetrics } from '../../lib/cluster/apigate.js';
import { counter, histogram } from '../../server/metrics.js';
import type { Registry } from '../../server/promclient.js';
import type { Shared } from '../../server/plugin.js';
import type { SourceSpec } from './config.js';
import { FollowingSource, PublishingStore } from './relay.js';
import { workerCount, workerIndex } from '../../server/siblings.js';

export interface SourceNeeds {
  /** Pods are watched only for `pods verified` (a large cluster has many). */
  pods: boolean;
  /** Endpoints are not watched with `noendpoints`. */
  endpoints: boolean;
  /** ServiceImports are read only for `multicluster` zones. */
  multicluster: boolean;
  /** Pods and no other kind (the workloads plugin in a block without kubernetes). */
  podsOnly?: boolean;
  /** Only the pods scheduled on this node (`spec.nodeName`). */
  nodeName?: string;
  /** Keep the endpoints' zones (`zonal`): each address one field more. */
  zones?: boolean;
}

export interface SourceHandle {
  readonly store: ClusterStore;
  readonly description: string;
  /** Starts the source once (later calls share the first start). */
  start(): Promise<void>;
  /** Drops this holder's reference. */
  release(): Promise<void>;
}

interface Entry {
  source: ClusterSource;
  refs: number;
  started?: Promise<void>;
  unsubscribe: () => void;
}

/** Buckets of CoreDNS's programming-latency histogram: 1 ms doubling to ~9 minutes. */
const LATENCY_BUCKETS = Array.from({ length: 20 }, (_, i) => 0.001 * 2 ** i);

/** Prometheus's default buckets, which CoreDNS's client-go request histograms use: 5 ms to 10 s. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The request metrics CoreDNS exports for its client-go client, recorded by kdns's API reader. */
export function apiRequestMetrics(registry: Registry): ApiRequestMetrics {
  const requests = counter(registry, 'coredns_kubernetes_rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', ['code', 'method', 'host']);
  const latency = histogram(registry, 'coredns_kubernetes_rest_client_request_duration_seconds', 'Request latency in seconds. Broken down by verb and host.', ['verb', 'host'], REQUEST_BUCKETS);
  const limiter = histogram(
    registry,
    'coredns_kubernetes_rest_client_rate_limiter_duration_seconds',
    'Client side rate limiter latency in seconds. Broken down by verb and host.',
    ['verb', 'host'],
    REQUEST_BUCKETS,
  );
  return {
    result: (code, method, host) => requests.inc({ code, method, host }),
    latency: (verb, host, seconds) => latency.observe({ verb, host }, seconds),
    rateLimiterLatency: (verb, host, seconds) => limiter.observe({ verb, host }, seconds),
  };
}

export type SourceFactory = (spec: SourceSpec, needs: SourceNeeds, store: ClusterStore, log: SourceLog, metrics?: ApiRequestMetrics) => Promise<ClusterSource>;

async function defaultFactory(spec: SourceSpec, needs: SourceNeeds, store: ClusterStore, log: SourceLog, metrics?: ApiRequestMetrics): Promise<ClusterSource> {
  if (spec.kind === 'directory') {
    const ignoreKinds = needs.podsOnly
      ? new Set(MANIFEST_KINDS.filter((k) => k !== 'Pod'))
      : new Set<string>([...(needs.pods ? [] : ['Pod']), ...(needs.endpoints ? [] : ['EndpointSlice', 'Endpoints']), ...(needs.multicluster ? [] : ['ServiceImport'])]);
    return new DirectorySource(spec.dir, store, {
      log,
      ignoreKinds,
      ...(needs.nodeName !== undefined ? { nodeName: needs.nodeName } : {}),
      maxFileBytes: maxFileBytesFrom(process.env['KDNS_CLUSTER_MAX_FILE_BYTES']),
    });
  }
  // Loaded only when used: @kubernetes/client-node costs tens of MB that a directory user never needs.
  const { createKubeApiSource } = await import('../../lib/cluster/kubeapi.js');
  return createKubeApiSource(spec, needs, store, log, undefined, metrics);
}

export function sourceKey(spec: SourceSpec, needs: SourceNeeds): string {
  // Blocks that need different kinds (or another node's pods) read the source separately: each
  // keeps only what it needs. Every field written out, in one order, so equal needs give one key.
  const n = { pods: needs.pods, endpoints: needs.endpoints, multicluster: needs.multicluster, podsOnly: needs.podsOnly ?? false, nodeName: needs.nodeName ?? '', zones: needs.zones ?? false };
  if (spec.kind === 'directory') {
    return `dir:${spec.dir}:${n.pods ? 'pods' : ''}:${n.endpoints ? 'endpoints' : ''}:${n.multicluster ? 'multicluster' : ''}:${n.podsOnly ? 'podsOnly' : ''}:${n.nodeName}:${n.zones ? 'zones' : ''}`;
  }
  return `api:${JSON.stringify({ ...spec, needs: n })}`;
}

export class SourceRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();

  constructor(
    private readonly shared: Shared,
    private readonly factory: SourceFactory = defaultFactory,
  ) {}

  /** The registry of this server process (one per `Shared`). */
  static of(shared: Shared): SourceRegistry {
    return shared.singleton('kubernetes/sources', () => new SourceRegistry(shared));
  }

  /** `owner` names the plugin in the source's log lines when this call creates it. */
  async acquire(spec: SourceSpec, needs: SourceNeeds, owner = 'kubernetes'): Promise<SourceHandle> {
    const key = sourceKey(spec, needs);
    const entry = await this.entry(key, spec, needs, owner);
    entry.refs++;
    let released = false;
    return {
      store: entry.source.store,
      description: entry.source.description,
      start: () => {
        entry.started ??= entry.source.start();
        return entry.started;
      },
      release: async () => {
        if (released) return;
        released = true;
        if (--entry.refs > 0) return;
        this.entries.delete(key);
        entry.unsubscribe();
        await entry.source.stop();
      },
    };
  }

  private async entry(key: string, spec: SourceSpec, needs: SourceNeeds, owner: string): Promise<Entry> {
    const existing = this.entries.get(key);
    if (existing) return existing;
    let p = this.pending.get(key);
    if (!p) {
      p = this.create(spec, needs, owner).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    const created = await p;
    this.entries.set(key, created);
    return created;
  }

  private async create(spec: SourceSpec, needs: SourceNeeds, owner: string): Promise<Entry> {
    const log = this.shared.log.plugin(owner);
    const source = await this.relayedOrRead(spec, needs, log);
    const latency = histogram(
      this.shared.metrics,
      'coredns_kubernetes_dns_programming_duration_seconds',
      'Histogram of the time (in seconds) it took to program a dns instance.',
      ['service_kind'],
      LATENCY_BUCKETS,
    );
    const unsubscribe = source.store.subscribe((d: StoreDelta) => {
      for (const l of d.programmingLatency) latency.observe({ service_kind: l.serviceKind }, l.seconds);
    });
    return { source, refs: 0, unsubscribe };
  }

  /**
   * With `multisocket`, the API is read by worker 0 alone, which publishes what it reads; the
   * other workers follow it (./relay.ts). A directory, and a process without siblings, is read here.
   */
  private async relayedOrRead(spec: SourceSpec, needs: SourceNeeds, log: SourceLog): Promise<ClusterSource> {
    const options = { endpointZones: needs.zones === true };
    if (spec.kind !== 'api') return this.factory(spec, needs, new ClusterStore(options), log);
    // Only the worker that reads the API makes requests, so only it has request metrics.
    if (workerCount() <= 1) return this.factory(spec, needs, new ClusterStore(options), log, apiRequestMetrics(this.shared.metrics));
    const channel = `cluster ${sourceKey(spec, needs)}`;
    if (workerIndex() === 0) return this.factory(spec, needs, new PublishingStore(channel, options), log, apiRequestMetrics(this.shared.metrics));
    // The follower converts what worker 0 read itself: it keeps zones by the same needs.
    return new FollowingSource(channel, new ClusterStore(options), `the Kubernetes API, as worker 0 reads it`);
  }
}
