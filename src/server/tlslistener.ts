// DNS over TLS (RFC 7858) for tls:// server blocks. TLS wraps the TCP listener's connection
// handling unchanged: the same 2-byte framing, pipelining, idle timeout and per-connection
// limits (listeners.ts). A tls:// block without a `tls` directive is served over plain TCP,
// as CoreDNS does.
//
// The listening socket outlives reloads; each accepted connection is handed to the TLS server
// built for the config current at that moment. A reload that changes certificates, client_auth
// or turns TLS on or off builds a new one: open connections keep the one they started with.

import { appendFile } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { Dispatcher } from './dispatch.js';
import { ConnectionTable, serveConnection, type TcpLimits } from './listeners.js';
import type { ClientAuth, TlsSettings } from './plugin.js';

/** A listener of an encrypted transport; a reload may hand it new certificates. */
export interface SecureListener {
  readonly transport: 'tls' | 'https';
  /** True while it speaks TLS (the block has a `tls` directive), false for cleartext. */
  readonly secure: boolean;
  readonly address: string;
  readonly port: number;
  /** Takes the tls settings of a reloaded config (undefined: cleartext) for new connections. */
  update(settings: TlsSettings | undefined): void;
  close(): Promise<void>;
}

/** Takes one accepted TCP connection. */
export type ConnectionHandler = (socket: net.Socket) => void;

/** Certificates as Node's TLS takes them. */
function contextOptions(s: TlsSettings): tls.SecureContextOptions {
  return { cert: s.cert, key: s.key, ...(s.ca ? { ca: s.ca } : {}) };
}

/** Checks the tls directive's files by building the context a listener would use; throws Node's reason. */
export function checkTlsSettings(s: TlsSettings): void {
  tls.createSecureContext(contextOptions(s));
}

function hasPeerCertificate(socket: tls.TLSSocket): boolean {
  const cert = socket.getPeerCertificate();
  return cert !== null && Object.keys(cert).length > 0;
}

/**
 * The client_auth modes Node's handshake options cannot express, checked once the handshake is
 * done: `require` wants some certificate (verified or not), `verify_if_given` refuses one that
 * does not verify but lets a client without one in.
 */
export function refusedByClientAuth(socket: tls.TLSSocket, mode: ClientAuth): boolean {
  if (mode === 'require') return !hasPeerCertificate(socket);
  if (mode === 'verify_if_given') return hasPeerCertificate(socket) && !socket.authorized;
  return false;
}

/** Server options for one identity: certificates, whether a client certificate is asked for and whether Node itself refuses an unverified one. */
export function tlsServerOptions(s: TlsSettings, limits: TcpLimits): tls.TlsOptions {
  return { ...contextOptions(s), requestCert: s.clientAuth !== 'nocert', rejectUnauthorized: s.clientAuth === 'require_and_verify', handshakeTimeout: limits.readTimeoutMs };
}

/**
 * Wires the parts every TLS server of kdns shares onto `server` (a tls.Server or an HTTP/2 secure
 * server, never listening itself): the key log, failed handshakes ending only their connection,
 * and client_auth after the handshake. `onSecure` gets each admitted connection.
 */
export function secureServer<S extends tls.Server>(server: S, s: TlsSettings, onSecure?: (socket: tls.TLSSocket) => void): S {
  if (s.keylog) {
    const file = s.keylog;
    server.on('keylog', (line: Buffer) => appendFile(file, line, { mode: 0o600 }, () => undefined));
  }
  server.on('tlsClientError', (_err, socket) => socket.destroy());
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    if (refusedByClientAuth(socket, s.clientAuth)) socket.destroy();
    else onSecure?.(socket);
  });
  return server;
}

/** Listens on address:port ('' = every address, dual-stack); rejects with the bind error. */
function listenOn(server: net.Server, address: string, port: number): Promise<number> {
  return new Promise<number>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ port, host: address === '' ? '::' : address, ipv6Only: false }, () => {
      server.off('error', reject);
      server.on('error', () => undefined);
      resolveListen((server.address() as net.AddressInfo).port);
    });
  });
}

/**
 * A TCP listener whose connections go to the handler `handlerFor` builds for the current tls
 * settings; `update` builds the next one. Closing ends every connection it accepted.
 */
export async function listenHandoff(
  transport: 'tls' | 'https',
  address: string,
  port: number,
  limits: TcpLimits,
  settings: TlsSettings | undefined,
  handlerFor: (settings: TlsSettings | undefined) => ConnectionHandler,
): Promise<SecureListener> {
  let current = settings;
  let handle = handlerFor(settings);
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    handle(socket);
  });
  server.maxConnections = limits.maxConnections;
  const bound = await listenOn(server, address, port);
  return {
    transport,
    get secure() {
      return current !== undefined;
    },
    address,
    port: bound,
    update(next) {
      if (next === current) return;
      current = next;
      handle = handlerFor(next);
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** DNS over TLS on address:port; plain DNS over TCP while `settings` is undefined. */
export async function listenTls(address: string, port: number, dispatcher: Dispatcher, settings: TlsSettings | undefined, limits: TcpLimits): Promise<SecureListener> {
  // The same fairness and idle-first closing as plain TCP, over the decrypted connections.
  const table = new ConnectionTable(limits);
  const serve = (socket: net.Socket): void => serveConnection(socket, dispatcher, limits, table);
  const listener = await listenHandoff('tls', address, port, limits, settings, (s) => {
    if (!s) return serve;
    const server = secureServer(tls.createServer(tlsServerOptions(s, limits)), s, serve);
    return (socket) => server.emit('connection', socket);
  });
  const close = listener.close;
  listener.close = async () => {
    table.closeAll();
    await close();
  };
  return listener;
}
