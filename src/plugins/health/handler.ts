// health: `/health` answers 200 OK while the process runs (also during lameduck: it is the
// readiness endpoint that says "stop sending traffic"). On shutdown, lameduck keeps DNS answering
// for a while so that clients and load balancers move away before the sockets close.

import type http from 'node:http';
import { nodeHttp } from '../../lib/node/http.js';
import { formatDuration } from '../../lib/corefile/args.js';
import type { Logger } from '../../server/log.js';
import { counter, histogram } from '../../server/metrics.js';
import type { Plugin, Shared } from '../../server/plugin.js';
import { endpointFor, loopbackUrl, type HttpEndpoint } from '../pkg/endpoint.js';
import { type HttpAddress } from '../pkg/httpaddress.js';

export interface HealthConfig {
  address: HttpAddress;
  /** How long DNS keeps answering after SIGTERM before the listeners close (0 = not at all). */
  lameduckMs: number;
}

/** How often the process asks its own /health, to see whether it keeps up with its load. */
const PROBE_INTERVAL_MS = 1000;
const PROBE_TIMEOUT_MS = 3000;
/** A local request slower than this means the event loop is badly behind. */
const PROBE_SLOW_MS = 1000;
/** CoreDNS's SlimTimeBuckets: 0.25 ms to 2.5 s by factors of ten. */
const PROBE_BUCKETS = [0.00025, 0.0025, 0.025, 0.25, 2.5];

export function answerHealth(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('OK');
}

/** One GET of `url`; resolves to the HTTP status, rejects on a network error or timeout. */
function getStatus(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = nodeHttp.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${formatDuration(timeoutMs)}`)));
    req.on('error', reject);
  });
}

/**
 * The self-check behind coredns_health_request_duration_seconds and
 * coredns_health_request_failures_total. One per listener, however many blocks share it.
 */
export class HealthProbe {
  private users = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly endpoint: HttpEndpoint,
    private readonly shared: Shared,
    private readonly log: Logger,
  ) {}

  acquire(): void {
    if (this.users++ > 0) return;
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  release(): void {
    if (--this.users > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One self-check: observed in the histogram, counted as a failure when it does not get 200. */
  async probe(): Promise<void> {
    if (this.running || !this.endpoint.listening) return;
    this.running = true;
    const duration = histogram(this.shared.metrics, 'coredns_health_request_duration_seconds', 'Seconds the process took to answer its own /health request.', [], PROBE_BUCKETS);
    const failures = counter(this.shared.metrics, 'coredns_health_request_failures_total', 'Times the process failed to answer its own /health request.');
    const url = loopbackUrl(this.endpoint.address, this.endpoint.port, '/health');
    const start = process.hrtime.bigint();
    try {
      const status = await getStatus(url, PROBE_TIMEOUT_MS);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      duration.observe(ms / 1000);
      if (status !== 200) {
        failures.inc();
        this.log.warn(`Local health request to "${url}" answered ${status}`);
      } else if (ms > PROBE_SLOW_MS) {
        this.log.warn(`Local health request to "${url}" took more than 1s: ${formatDuration(ms)}`);
      }
    } catch (e) {
      duration.observe(Number(process.hrtime.bigint() - start) / 1e9);
      failures.inc();
      this.log.warn(`Local health request to "${url}" failed: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}

export class HealthPlugin implements Plugin {
  readonly name = 'health';
  private release?: () => Promise<void>;
  private probe?: HealthProbe;

  constructor(
    readonly config: HealthConfig,
    private readonly shared: Shared,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const endpoint = endpointFor(this.shared, this.config.address);
    this.release = await endpoint.claim('/health', answerHealth, 'health');
    const key = `health-probe|${this.config.address.host ?? '*'}|${this.config.address.port}`;
    this.probe = this.shared.singleton(key, () => new HealthProbe(endpoint, this.shared, this.log));
    this.probe.acquire();
  }

  /** Lameduck: the server still answers queries while this waits. */
  async beforeShutdown(): Promise<void> {
    if (this.config.lameduckMs <= 0) return;
    this.log.info(`Going into lameduck mode for ${formatDuration(this.config.lameduckMs)}`);
    await new Promise((resolve) => setTimeout(resolve, this.config.lameduckMs));
  }

  async stop(): Promise<void> {
    this.probe?.release();
    this.probe = undefined;
    const release = this.release;
    this.release = undefined;
    await release?.();
  }
}
