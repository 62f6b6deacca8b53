// ready: `/ready` answers 200 OK once every plugin that reports readiness is ready, else 503 with
// the names of those that are not (what a kubelet readiness probe and a person with curl need).

import type http from 'node:http';
import type { Logger } from '../../server/log.js';
import type { Plugin, ServerControl, Shared } from '../../server/plugin.js';
import { endpointFor } from '../pkg/endpoint.js';
import { type HttpAddress } from '../pkg/httpaddress.js';

/**
 * until-ready: a plugin that was ready once counts as ready from then on (CoreDNS's default:
 * a data source that loses its API server keeps serving what it has).
 * continuously: ask every time.
 */
export type MonitorMode = 'until-ready' | 'continuously';

export interface ReadyConfig {
  address: HttpAddress;
  monitor: MonitorMode;
}

export type Readiness = ReturnType<ServerControl['readiness']>;

export interface ReadyAnswer {
  status: 200 | 503;
  body: string;
}

export const SHUTTING_DOWN = 'Shutting down';

/**
 * The answer for one probe. `seenReady` holds plugin+zone keys that were ready before; in
 * until-ready mode they are not asked again, and keys that are ready now are added to it.
 */
export function readyAnswer(readiness: Readiness, shuttingDown: boolean, mode: MonitorMode, seenReady: Set<string>): ReadyAnswer {
  if (shuttingDown) return { status: 503, body: SHUTTING_DOWN };
  const notReady = new Set<string>();
  for (const r of readiness) {
    const key = `${r.plugin}|${r.zone}`;
    if (mode === 'until-ready' && seenReady.has(key)) continue;
    if (r.status === true) {
      if (mode === 'until-ready') seenReady.add(key);
    } else {
      notReady.add(r.plugin);
    }
  }
  if (notReady.size === 0) return { status: 200, body: 'OK' };
  return { status: 503, body: [...notReady].sort().join(',') };
}

export class ReadyPlugin implements Plugin {
  readonly name = 'ready';
  /** Per config instance: a reload asks every plugin of the new config again, as CoreDNS resets its list. */
  private readonly seenReady = new Set<string>();
  private release?: () => Promise<void>;

  constructor(
    readonly config: ReadyConfig,
    private readonly shared: Shared,
    private readonly server: ServerControl,
    private readonly log: Logger,
  ) {}

  answer(): ReadyAnswer {
    return readyAnswer(this.server.readiness(), this.server.shuttingDown(), this.config.monitor, this.seenReady);
  }

  private readonly handle = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    const a = this.answer();
    if (a.status !== 200 && a.body !== SHUTTING_DOWN) this.log.info(`Plugins not ready: "${a.body}"`);
    res.writeHead(a.status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(a.body);
  };

  async start(): Promise<void> {
    this.release = await endpointFor(this.shared, this.config.address).claim('/ready', this.handle, 'ready');
  }

  async stop(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    await release?.();
  }
}
