// The pods of a workloads block without a kubernetes plugin (a node-local cache): a pods-only
// source from the registry the kubernetes plugin uses, so a reload keeps it and blocks that read
// the same pods share one watch. It never holds DNS up: the first list arrives in the background,
// and a source that cannot be built (no in-cluster credentials, a kubeconfig not there yet) is
// tried again later. Until pods arrive, every client counts as `_unknown`.

import type { Logger } from '../../server/log.js';
import type { SourceHandle, SourceNeeds, SourceRegistry, SourceSpec } from '../kubernetes/index.js';
import type { PodIndex } from './accounting.js';

export interface RetryTiming {
  /** First wait after a source could not be built; doubles up to maxMs. */
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryTiming = { initialMs: 2_000, maxMs: 120_000 };

/** Stores whose first load was logged: blocks sharing a source (and reloads) say it once. */
const announced = new WeakSet<object>();

export class OwnPods {
  private handle: SourceHandle | undefined;
  private attempt: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private delayMs: number;

  constructor(
    private readonly registry: SourceRegistry,
    private readonly spec: SourceSpec,
    private readonly needs: SourceNeeds,
    private readonly log: Logger,
    private readonly retry: RetryTiming = DEFAULT_RETRY,
  ) {
    this.delayMs = retry.initialMs;
  }

  /** The pods by IP once the source exists (empty until its first list), else undefined. */
  get index(): PodIndex | undefined {
    return this.handle?.store;
  }

  /** Builds and starts the source; resolves without waiting for its first list. */
  async start(): Promise<void> {
    this.stopped = false;
    this.attempt = this.acquire();
    await this.attempt;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.attempt;
    const h = this.handle;
    this.handle = undefined;
    await h?.release();
  }

  private async acquire(): Promise<void> {
    let handle: SourceHandle;
    try {
      handle = await this.registry.acquire(this.spec, this.needs, 'workloads');
    } catch (e) {
      if (this.stopped) return;
      const delay = this.delayMs;
      this.delayMs = Math.min(this.delayMs * 2, this.retry.maxMs);
      this.log.error(`cannot read pods: ${(e as Error).message}; every client counts as _unknown; retrying in ${delay} ms`);
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.stopped) this.attempt = this.acquire();
      }, delay);
      this.timer.unref();
      return;
    }
    if (this.stopped) {
      await handle.release();
      return;
    }
    this.handle = handle;
    const where = this.needs.nodeName === undefined ? '' : ` on node ${this.needs.nodeName}`;
    // Problems after this are the source's to retry and log (an API down, a 403): never thrown.
    handle.start().then(
      () => {
        if (this.handle !== handle || announced.has(handle.store)) return;
        announced.add(handle.store);
        this.log.info(`${handle.store.counts().pods} pods${where} from ${handle.description}`);
      },
      (e: unknown) => this.log.error(`${handle.description}: ${(e as Error).message}`),
    );
  }
}
