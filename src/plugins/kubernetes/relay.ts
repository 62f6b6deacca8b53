// The cluster read once per pod with `multisocket`: worker 0 reads the Kubernetes API and
// publishes every change its store takes; the other workers follow, through the parent
// (src/supervisor/relayhub.ts keeps the latest value of each object for a worker that starts
// later or restarts). A watch of 10,000 Services and Pods is one watch on the API server, not N,
// and a restarted worker is ready as soon as the parent has handed it the state.
//
// What travels is the store's own input (the trimmed ClusterObject and its version), so every
// worker's store indexes the same objects the same way. Manifest directories are not relayed:
// each worker reads the local files itself.

import { namespaceOf, objectKey, parseObjectKey } from '../../lib/cluster/keys.js';
import type { ObjectVersion } from '../../lib/cluster/records.js';
import type { ClusterSource } from '../../lib/cluster/source.js';
import { ClusterStore, type StoredKind, type StoreOptions } from '../../lib/cluster/store.js';
import type { ClusterObject } from '../../lib/cluster/types.js';
import { follow, publish, type RelayOps } from '../../server/siblings.js';

/**
 * EndpointSlices carry when their change began; the worker that read the change observes the
 * DNS programming latency, a follower must not observe it again (the pod's histogram would count
 * each change once per worker).
 */
const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** A store that also publishes each write on `channel`, one message per turn of the event loop. */
export class PublishingStore extends ClusterStore {
  private unpublished: RelayOps | undefined;

  constructor(
    private readonly channel: string,
    options: StoreOptions = {},
  ) {
    super(options);
  }

  override upsert(obj: ClusterObject, given?: ObjectVersion): boolean {
    const changed = super.upsert(obj, given);
    if (changed) this.queue().changes.push([objectKey(obj.kind, namespaceOf(obj.kind, obj.metadata.namespace), obj.metadata.name), JSON.stringify([obj, given ?? null])]);
    return changed;
  }

  override remove(kind: StoredKind, namespace: string | undefined, name: string): void {
    super.remove(kind, namespace, name);
    this.queue().changes.push([objectKey(kind, namespaceOf(kind, namespace), name), null]);
  }

  override markSynced(): void {
    super.markSynced();
    this.queue().synced = true;
  }

  private queue(): RelayOps {
    if (!this.unpublished) {
      this.unpublished = { changes: [] };
      queueMicrotask(() => this.flush());
    }
    return this.unpublished;
  }

  private flush(): void {
    const ops = this.unpublished;
    this.unpublished = undefined;
    if (ops) publish(this.channel, ops);
  }
}

/** Applies relayed changes to a follower's store, each message as one batch. */
export function applyRelayed(store: ClusterStore, ops: RelayOps): void {
  store.batch(() => {
    for (const [key, value] of ops.changes) {
      if (value === null) {
        const { kind, namespace, name } = parseObjectKey(key);
        store.remove(kind, namespace, name);
        continue;
      }
      const [obj, version] = JSON.parse(value) as [ClusterObject, ObjectVersion | null];
      if (obj.metadata.annotations?.[TRIGGER_TIME_ANNOTATION] !== undefined) delete obj.metadata.annotations[TRIGGER_TIME_ANNOTATION];
      store.upsert(obj, version ?? undefined);
    }
  });
  if (ops.synced) store.markSynced();
}

/** A worker's source that follows what worker 0 reads. */
export class FollowingSource implements ClusterSource {
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly channel: string,
    readonly store: ClusterStore,
    readonly description: string,
  ) {}

  start(): Promise<void> {
    return new Promise((resolve) => {
      this.unfollow = follow(this.channel, (ops) => {
        applyRelayed(this.store, ops);
        if (this.store.synced) resolve();
      });
    });
  }

  async stop(): Promise<void> {
    this.unfollow?.();
    this.unfollow = undefined;
  }
}
