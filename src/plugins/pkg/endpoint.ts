// HTTP endpoints for health, ready, prometheus and workloads (and the node cache's metrics
// listener): one listener per address for the whole process, shared by every server
// block and every config instance that names the address, so a reload neither drops the port
// nor fails on "address already in use" against itself.
//
// A path may be claimed by several owners at once (old and new config during a reload); the
// latest claim answers, and the listener closes when the last claim on its last path is released.

import type http from 'node:http';
import { nodeHttp } from '../../lib/node/http.js';
import https from 'node:https';
import net from 'node:net';
import type tls from 'node:tls';
import type { Shared, TlsSettings } from '../../server/plugin.js';
import { refusedByClientAuth } from '../../server/tlslistener.js';
import type { HttpAddress } from './httpaddress.js';

/** What an HTTPS listener serves with (prometheus's `tls`): the identity and the TLS versions. */
export interface HttpsIdentity {
  settings: TlsSettings;
  minVersion: tls.SecureVersion;
  maxVersion: tls.SecureVersion;
}

/** Node's options for an identity: certificates, versions, and whether to ask for a client certificate. */
function httpsOptions(id: HttpsIdentity): tls.TlsOptions {
  const s = id.settings;
  return {
    cert: s.cert,
    key: s.key,
    ...(s.ca ? { ca: s.ca } : {}),
    minVersion: id.minVersion,
    maxVersion: id.maxVersion,
    requestCert: s.clientAuth !== 'nocert',
    rejectUnauthorized: s.clientAuth === 'require_and_verify',
  };
}

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/** An address to reach a listener from this host: loopback when it listens on every address. */
export function loopbackUrl(address: HttpAddress, port: number, path: string): string {
  const host = address.host === undefined || address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' ? '::1' : address.host;
  return `http://${net.isIPv6(host) ? `[${host}]` : host}:${port}${path}`;
}

interface Claim {
  handler: RouteHandler;
}

export class HttpEndpoint {
  private server: http.Server | undefined;
  /** The identity the listener serves HTTPS with; undefined while it serves plain HTTP. */
  private identity: HttpsIdentity | undefined;
  private readonly routes = new Map<string, Claim[]>();
  // Opening and closing are serialized so a release racing a claim never closes a port in use.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly address: HttpAddress) {}

  /** The port actually bound (differs from address.port only for port 0). */
  get port(): number {
    const a = this.server?.address();
    return a && typeof a === 'object' ? a.port : this.address.port;
  }

  get listening(): boolean {
    return this.server !== undefined;
  }

  /**
   * Makes `handler` answer `path` (opening the listener if needed). Resolves to the function
   * that gives the claim back. Rejects with a message naming `owner` when the port cannot be bound.
   */
  claim(path: string, handler: RouteHandler, owner: string, identity?: HttpsIdentity): Promise<() => Promise<void>> {
    return this.serialized(async () => {
      if (this.server && (identity !== undefined) !== (this.identity !== undefined)) {
        // One port speaks one protocol: an HTTPS claim on a plain listener (or the other way)
        // would leave one of the two unreachable.
        const now = this.identity ? 'HTTPS' : 'plain HTTP';
        const wanted = identity ? 'HTTPS' : 'plain HTTP';
        throw new Error(`plugin/${owner}: ${this.address.text} already serves ${now} (${[...this.routes.keys()].join(', ')}); it cannot serve ${path} over ${wanted} too: use another address, or restart kdns to switch`);
      }
      const claim: Claim = { handler };
      const list = this.routes.get(path) ?? [];
      list.push(claim);
      this.routes.set(path, list);
      if (!this.server) {
        try {
          this.identity = identity;
          this.server = await this.listen();
        } catch (e) {
          this.identity = undefined;
          this.drop(path, claim);
          throw new Error(`plugin/${owner}: cannot listen on ${this.address.text}: ${describeListenError(e)}`);
        }
      } else if (identity && this.server instanceof https.Server) {
        // A reload with new certificates: new connections get them, open ones keep theirs.
        this.identity = identity;
        this.server.setSecureContext(httpsOptions(identity));
      }
      let released = false;
      return () => {
        if (released) return Promise.resolve();
        released = true;
        return this.release(path, claim);
      };
    });
  }

  private release(path: string, claim: Claim): Promise<void> {
    return this.serialized(async () => {
      this.drop(path, claim);
      if (this.routes.size === 0 && this.server) {
        const server = this.server;
        this.server = undefined;
        this.identity = undefined;
        await closeServer(server);
      }
    });
  }

  private drop(path: string, claim: Claim): void {
    const list = this.routes.get(path);
    if (!list) return;
    const i = list.indexOf(claim);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.routes.delete(path);
  }

  private serialized<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** True while the listener serves HTTPS. */
  get secure(): boolean {
    return this.identity !== undefined;
  }

  private createServer(): http.Server {
    const dispatch = (req: http.IncomingMessage, res: http.ServerResponse): void => this.dispatch(req, res);
    if (!this.identity) return nodeHttp.createServer(dispatch);
    const server = https.createServer(httpsOptions(this.identity), dispatch);
    // A failed handshake ends its connection only.
    server.on('tlsClientError', (_err, socket) => socket.destroy());
    // The client_auth modes Node's handshake cannot express (require, verify_if_given).
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      if (this.identity && refusedByClientAuth(socket, this.identity.settings.clientAuth)) socket.destroy();
    });
    return server;
  }

  private listen(): Promise<http.Server> {
    const server = this.createServer();
    // Probes and scrapers open a connection per request; do not let idle ones pin the process.
    server.keepAliveTimeout = 5000;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      // SO_REUSEPORT (Node 22.12+; older ignore it), as the DNS listeners: the next node-cache
      // pod binds its health and metrics ports while the one it replaces still holds them.
      server.listen({ port: this.address.port, host: this.address.host, ...({ reusePort: true } as Record<string, boolean>) }, () => {
        server.off('error', reject);
        // Once listening, an error here (e.g. accept failing with too many open files) must not
        // crash the DNS server: an unhandled 'error' event would. The listener keeps going.
        server.on('error', () => undefined);
        resolve(server);
      });
    });
  }

  private dispatch(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] as string;
    const list = this.routes.get(path);
    const claim = list?.[list.length - 1];
    if (!claim) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    Promise.resolve()
      .then(() => claim.handler(req, res))
      .catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(e instanceof Error ? e.message : String(e));
      });
  }
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive connections of scrapers would otherwise hold the port open until they time out.
    server.closeAllConnections();
  });
}

function describeListenError(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === 'EADDRINUSE') return 'address already in use';
  if (code === 'EADDRNOTAVAIL') return 'cannot assign requested address';
  if (code === 'EACCES') return 'permission denied';
  return e instanceof Error ? e.message : String(e);
}

/** The process-wide endpoint for an address (one per host:port, whatever the spelling). */
export function endpointFor(shared: Shared, address: HttpAddress): HttpEndpoint {
  return shared.singleton(`http-endpoint|${address.host ?? '*'}|${address.port}`, () => new HttpEndpoint(address));
}
