// What stands between kdns's API reader and the API server: a client-side rate limit and a cap
// on requests in flight (the kubernetes plugin's `apiserver_qps`, `apiserver_burst` and
// `apiserver_max_inflight`), and the request metrics CoreDNS exports through client-go.
//
// A reader that lists 5 kinds once and then watches makes few requests; the limits matter when
// many replicas relist at once (an API server restart, a compacted history), which is when the
// API server can least afford them.

/** The limits of one API client; 0 (or absent) means "no limit" for that field. */
export interface ApiLimits {
  /** Requests per second, the token bucket's refill rate (client-go's QPS). */
  qps: number;
  /** Requests that may go at once before the rate applies (client-go's Burst). */
  burst: number;
  /** Requests open at once (lists until their body is read, watches until they are established). */
  maxInflight: number;
}

/** What client-go (and so CoreDNS) uses for a zero QPS or burst: 5 requests a second, bursts of 10. */
export const CLIENT_GO_DEFAULT_QPS = 5;
export const CLIENT_GO_DEFAULT_BURST = 10;

/** What the reader reports per request, as CoreDNS's client-go adapter does (see ./kubeapi.ts). */
export interface ApiRequestMetrics {
  /** A request answered (code "200", "410", …) or failed without an answer (code "<error>"). */
  result(code: string, method: string, host: string): void;
  /** From the request's start (queueing for a slot included) to its body read (lists) or its stream established (watches). */
  latency(verb: string, host: string, seconds: number): void;
  /** How long the request waited for the rate limiter's token. */
  rateLimiterLatency(verb: string, host: string, seconds: number): void;
}

/**
 * A token bucket: full (`burst` tokens) at first, refilled at `qps` a second up to `burst`.
 * Each request takes a token; one that finds none waits for the next. Reservations may take
 * the bucket below zero, so waiters are served in the order they asked, each `1/qps` apart.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(qps > 0)) throw new Error(`qps must be more than 0, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new Error(`burst must be a whole number, 1 or more, got ${burst}`);
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token; the milliseconds to wait before using it (0: go now). */
  reserve(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
}

/** At most `max` holders at once; the others wait in the order they came. */
export class Slots {
  private held = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`max must be a whole number, 1 or more, got ${max}`);
  }

  get inUse(): number {
    return this.held;
  }

  /** Resolves with the slot's release once one is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.held < this.max) {
      this.held++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.releaser());
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  /** A release that frees the slot once, however often it is called. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `held` stays the same.
      if (next) next();
      else this.held--;
    };
  }
}

/** A request let through: `release` frees its in-flight slot, `finish` records its outcome. */
export interface Admission {
  release(): void;
  /** Records the result and latency (the slot is released too). `code` is the HTTP status or "<error>". */
  finish(code: string): void;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The host label of the metrics: the authority of the server's URL as written, port included
 * (client-go reports `u.Host`, which keeps ":443"; WHATWG URL parsing would drop it).
 */
export function hostOf(server: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(server);
  return m?.[1] ?? server;
}

/**
 * One API client's limits and metrics. Every request of a source (each kind's lists and watches)
 * goes through the same gate, as every request of a client-go client shares its rate limiter.
 */
export class ApiGate {
  private readonly bucket: TokenBucket | undefined;
  private readonly slots: Slots | undefined;

  constructor(
    limits: ApiLimits,
    private readonly metrics?: ApiRequestMetrics,
    private readonly now: () => number = () => performance.now(),
  ) {
    // Either setting turns the rate limit on; the other then takes client-go's default, as it
    // would in a client-go client.
    if (limits.qps > 0 || limits.burst > 0) {
      this.bucket = new TokenBucket(limits.qps > 0 ? limits.qps : CLIENT_GO_DEFAULT_QPS, limits.burst > 0 ? limits.burst : CLIENT_GO_DEFAULT_BURST, now);
    }
    if (limits.maxInflight > 0) this.slots = new Slots(limits.maxInflight);
  }

  /** Waits for a token and a slot (in that order, so a waiting request holds no slot). */
  async admit(method: string, host: string, signal?: AbortSignal): Promise<Admission> {
    const started = this.now();
    const wait = this.bucket?.reserve() ?? 0;
    if (wait > 0) await sleep(wait, signal);
    this.metrics?.rateLimiterLatency(method, host, (this.now() - started) / 1000);
    const release = this.slots ? await this.slots.acquire(signal) : () => {};
    let finished = false;
    return {
      release,
      finish: (code) => {
        release();
        if (finished) return;
        finished = true;
        this.metrics?.result(code, method, host);
        this.metrics?.latency(method, host, (this.now() - started) / 1000);
      },
    };
  }
}

/** A gate with no limits: only metrics (or nothing). */
export function unlimitedGate(metrics?: ApiRequestMetrics): ApiGate {
  return new ApiGate({ qps: 0, burst: 0, maxInflight: 0 }, metrics);
}
