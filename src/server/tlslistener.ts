// DNS over TLS (RFC 7858) for tls:// server blocks. TLS wraps the TCP listener's connection
// handling unchanged: the same 2-byte framing, pipelining, idle timeout and per-connection
// limits (listeners.ts). A tls:// block without a `tls` directive is served over plain TCP,
// as CoreDNS does.

import { appendFile } from 'node:fs';
import type net from 'node:net';
import tls from 'node:tls';
import type { Dispatcher } from './dispatch.js';
import { listenTcp, serveConnection, type TcpLimits } from './listeners.js';
import type { ClientAuth, TlsSettings } from './plugin.js';

/** A listener of an encrypted transport; a reload may hand it new certificates. */
export interface SecureListener {
  readonly transport: 'tls' | 'https';
  /** True when it speaks TLS (the block has a `tls` directive), false for cleartext. */
  readonly secure: boolean;
  readonly address: string;
  readonly port: number;
  /** Takes the certificates and client_auth of a reloaded config for new connections. */
  update(settings: TlsSettings | undefined): void;
  close(): Promise<void>;
}

/** Certificates as Node's TLS takes them. */
function contextOptions(s: TlsSettings): tls.SecureContextOptions {
  return { cert: s.cert, key: s.key, ...(s.ca ? { ca: s.ca } : {}) };
}

/** Checks the tls directive's files by building the context a listener would use; throws Node's reason. */
export function checkTlsSettings(s: TlsSettings): void {
  tls.createSecureContext(contextOptions(s));
}

/** Whether the handshake asks for a client certificate, and whether Node itself refuses an unverified one. */
function handshakePolicy(mode: ClientAuth): { requestCert: boolean; rejectUnauthorized: boolean } {
  return { requestCert: mode !== 'nocert', rejectUnauthorized: mode === 'require_and_verify' };
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

/**
 * The part of a TLS listener a reload changes: certificates, client_auth and key log apply to
 * connections accepted after it; connections already open keep what they started with.
 */
export class TlsIdentity {
  private settings: TlsSettings;

  constructor(
    private readonly server: tls.Server,
    settings: TlsSettings,
  ) {
    this.settings = settings;
    this.apply(settings);
    server.on('keylog', (line: Buffer) => {
      const file = this.settings.keylog;
      if (file) appendFile(file, line, { mode: 0o600 }, () => undefined);
    });
  }

  /** Server options at creation: the first identity. */
  static serverOptions(settings: TlsSettings): tls.TlsOptions {
    return { ...contextOptions(settings), ...handshakePolicy(settings.clientAuth) };
  }

  update(settings: TlsSettings): void {
    this.settings = settings;
    this.apply(settings);
    this.server.setSecureContext(contextOptions(settings));
  }

  /** False (and the socket closed) when client_auth refuses the peer. */
  admit(socket: tls.TLSSocket): boolean {
    if (!refusedByClientAuth(socket, this.settings.clientAuth)) return true;
    socket.destroy();
    return false;
  }

  private apply(settings: TlsSettings): void {
    // tls.Server reads these per connection (Node's _tls_wrap), so a reload may change them.
    const target = this.server as tls.Server & { requestCert: boolean; rejectUnauthorized: boolean };
    Object.assign(target, handshakePolicy(settings.clientAuth));
  }
}

/** Closes the server and every connection it accepted. */
export function closeServer(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  return new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.destroy();
  });
}

/** Listens on address:port ('' = every address, dual-stack); rejects with the bind error. */
export function listenOn(server: net.Server, address: string, port: number): Promise<number> {
  server.on('error', () => undefined);
  return new Promise<number>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ port, host: address === '' ? '::' : address, ipv6Only: false }, () => {
      server.off('error', reject);
      resolveListen((server.address() as net.AddressInfo).port);
    });
  });
}

/** Remembers open connections so close() can end them. */
export function trackSockets(server: net.Server, event: 'connection' | 'secureConnection'): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  server.on(event, (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

/** DNS over TLS on address:port; plain DNS over TCP when `settings` is undefined. */
export async function listenTls(address: string, port: number, dispatcher: Dispatcher, settings: TlsSettings | undefined, limits: TcpLimits): Promise<SecureListener> {
  if (!settings) {
    const plain = await listenTcp(address, port, dispatcher, limits);
    return { transport: 'tls', secure: false, address, port: plain.port, update: () => undefined, close: () => plain.close() };
  }
  const server = tls.createServer({ ...TlsIdentity.serverOptions(settings), handshakeTimeout: limits.idleTimeoutMs });
  server.maxConnections = limits.maxConnections;
  const identity = new TlsIdentity(server, settings);
  // Sockets are tracked from TCP accept, so close() also ends handshakes still in progress.
  const sockets = trackSockets(server, 'connection');
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    if (identity.admit(socket)) serveConnection(socket, dispatcher, limits);
  });
  // A failed handshake (bad client certificate, not TLS at all) ends that connection only.
  server.on('tlsClientError', (_err, socket) => socket.destroy());
  const bound = await listenOn(server, address, port);
  return {
    transport: 'tls',
    secure: true,
    address,
    port: bound,
    update: (s) => {
      if (s) identity.update(s);
    },
    close: () => closeServer(server, sockets),
  };
}
