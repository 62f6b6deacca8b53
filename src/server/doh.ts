// DNS over HTTPS (RFC 8484) for https:// server blocks: GET /dns-query?dns=<base64url> and POST
// /dns-query with an application/dns-message body, over HTTP/2 or HTTP/1.1 with TLS. The
// message goes through the same Dispatcher as UDP and TCP (so the same zones and plugin chain);
// an https:// block without a `tls` directive serves cleartext HTTP/1.1 (behind a TLS-ending
// proxy), as CoreDNS does.

import type http from 'node:http';
import { nodeHttp } from '../lib/node/http.js';
import http2 from 'node:http2';
import { decodeMessage } from '../lib/dns/codec.js';
import { RCode, RRType } from '../lib/dns/types.js';
import type { Message } from '../lib/dns/types.js';
import type { Dispatcher, Outcome } from './dispatch.js';
import { plainAddress, type TcpLimits } from './listeners.js';
import type { TlsSettings } from './plugin.js';
import type { ClientInfo } from './request.js';
import { listenHandoff, secureServer, tlsServerOptions, type SecureListener } from './tlslistener.js';

export const DOH_PATH = '/dns-query';
export const DOH_MEDIA_TYPE = 'application/dns-message';
/** Largest DNS message a request may carry (a TCP message's limit). */
const MAX_QUERY_BYTES = 65535;
const MAX_BASE64_CHARS = Math.ceil((MAX_QUERY_BYTES * 8) / 6);
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Cache-Control max-age bounds, seconds (CoreDNS's MinimalDefaultTTL and MaximumDefaultTTL). */
const MIN_MAX_AGE = 5;
const MAX_MAX_AGE = 3600;

type DohRequest = http.IncomingMessage | http2.Http2ServerRequest;
type DohResponse = http.ServerResponse | http2.Http2ServerResponse;

/** Counts responses by status code (coredns_dns_https_responses_total). */
export type StatusCounter = (status: number) => void;

/** Why a request carries no DNS message; answered 400. */
class BadRequest extends Error {}

/** The query of a GET: exactly one `dns` parameter, unpadded base64url. */
export function queryFromGet(url: URL): Buffer {
  const values = url.searchParams.getAll('dns');
  if (values.length === 0) throw new BadRequest("no 'dns' query parameter found");
  if (values.length > 1) throw new BadRequest("multiple 'dns' query values found");
  const b64 = values[0] as string;
  if (b64.length > MAX_BASE64_CHARS) throw new BadRequest('dns query too large');
  if (!BASE64URL.test(b64)) throw new BadRequest('dns parameter is not unpadded base64url');
  return Buffer.from(b64, 'base64url');
}

/** The body of a POST, refused once it passes MAX_QUERY_BYTES. */
function readBody(req: DohRequest): Promise<Buffer> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_QUERY_BYTES) {
        req.removeAllListeners('data');
        reject(new BadRequest('request body too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolveBody(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * How long an HTTP cache may keep the answer: the smallest TTL in it, within [5s, 1h]; 5s when
 * it is not a plain answer, NXDOMAIN or NODATA, or has no records (CoreDNS's MinimalTTL).
 */
export function maxAge(msg: Message): number {
  const rcodeOk = msg.rcode === RCode.NOERROR || msg.rcode === RCode.NXDOMAIN;
  const delegation = msg.rcode === RCode.NOERROR && msg.answers.length === 0 && msg.authority.some((r) => r.type === RRType.NS) && !msg.authority.some((r) => r.type === RRType.SOA);
  const records = [...msg.answers, ...msg.authority, ...msg.additional];
  if (!rcodeOk || delegation || records.length === 0) return MIN_MAX_AGE;
  return records.reduce((min, r) => Math.min(min, r.ttl), MAX_MAX_AGE);
}

/** The response can no longer be sent: its HTTP/2 stream or HTTP/1.1 connection is gone, or it was sent. */
function abandoned(res: DohResponse): boolean {
  return res.writableEnded || ('stream' in res ? res.stream.destroyed : res.destroyed);
}

function send(res: DohResponse, status: number, count: StatusCounter, body?: Buffer, age?: number): void {
  // Past its write deadline the response was abandoned: nothing more goes out, nothing is counted.
  if (abandoned(res)) return;
  count(status);
  if (body === undefined) {
    const text = status === 404 ? '\n' : status === 400 ? 'invalid request\n' : 'No response\n';
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(text);
    return;
  }
  res.writeHead(status, { 'content-type': DOH_MEDIA_TYPE, 'cache-control': `max-age=${age ?? MIN_MAX_AGE}`, 'content-length': body.length });
  res.end(body);
}

function clientOf(req: DohRequest): ClientInfo {
  const s = req.socket;
  return {
    transport: 'tcp',
    remoteAddress: plainAddress(s.remoteAddress ?? ''),
    remotePort: s.remotePort ?? 0,
    localAddress: plainAddress(s.localAddress ?? ''),
    localPort: s.localPort ?? 0,
  };
}

async function rawQuery(req: DohRequest, url: URL): Promise<Buffer> {
  if (req.method === 'GET') return queryFromGet(url);
  if (req.method === 'POST') return readBody(req);
  throw new BadRequest(`method not allowed: ${req.method ?? ''}`);
}

/** One HTTP request: the DNS query out of it, through the dispatcher, the answer back. */
async function serveDoh(req: DohRequest, res: DohResponse, dispatcher: Dispatcher, count: StatusCounter): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://doh.invalid');
  if (url.pathname !== DOH_PATH) return send(res, 404, count);
  let raw: Buffer;
  try {
    raw = await rawQuery(req, url);
  } catch (e) {
    if (e instanceof BadRequest) return send(res, 400, count);
    throw e;
  }
  // A response, or less than a header, is no request (CoreDNS's UnpackRequest refuses both).
  if (raw.length < 12 || (raw.readUInt16BE(2) & 0x8000) !== 0) return send(res, 400, count);
  const out: Outcome = dispatcher.handle(raw, clientOf(req));
  const bytes = await out;
  if (!bytes) return send(res, 500, count);
  let age = MIN_MAX_AGE;
  try {
    age = maxAge(decodeMessage(bytes));
  } catch {
    // Every reply kdns makes parses; should one not, the short default is the safe answer.
  }
  send(res, 200, count, bytes, age);
}

/**
 * `timeouts write` for DNS over HTTPS, as Go's http.Server WriteTimeout that CoreDNS sets: from
 * the request's headers until its response has gone out. A response not sent by then is
 * abandoned: the HTTP/2 stream is reset (the session's other requests go on), an HTTP/1.1
 * connection is closed. A slow upstream or a client that does not read cannot hold the
 * request's memory longer than that.
 */
function writeDeadline(res: DohResponse, ms: number): void {
  const timer = setTimeout(() => {
    if (res.writableFinished) return;
    if ('stream' in res) res.stream.close(http2.constants.NGHTTP2_CANCEL);
    else res.destroy();
  }, ms);
  res.once('close', () => clearTimeout(timer));
}

/** DNS over HTTPS on address:port; cleartext HTTP/1.1 while `settings` is undefined. */
export function listenHttps(
  address: string,
  port: number,
  dispatcher: Dispatcher,
  settings: TlsSettings | undefined,
  limits: TcpLimits,
  count: StatusCounter,
): Promise<SecureListener> {
  const onRequest = (req: DohRequest, res: DohResponse): void => {
    writeDeadline(res, limits.stalledTimeoutMs);
    serveDoh(req, res, dispatcher, count).catch(() => {
      if (!res.headersSent) send(res, 500, count);
      else res.destroy();
    });
  };
  return listenHandoff('https', address, port, limits, settings, (s) => {
    if (!s) {
      // `timeouts read` bounds receiving a request (Go's http.Server ReadTimeout), `idle` the
      // wait for the next one on a kept-alive connection.
      const plain = nodeHttp.createServer({ keepAliveTimeout: limits.idleTimeoutMs, headersTimeout: limits.readTimeoutMs, requestTimeout: limits.readTimeoutMs }, onRequest);
      return (socket) => plain.emit('connection', socket);
    }
    // HTTP/2 is what DoH clients prefer (RFC 8484 recommends it); HTTP/1.1 stays for curl and scripts.
    const secure = http2.createSecureServer({ ...tlsServerOptions(s, limits), allowHTTP1: true, ALPNProtocols: ['h2', 'http/1.1'] }, onRequest);
    secure.setTimeout(limits.idleTimeoutMs);
    secureServer(secure, s);
    return (socket) => secure.emit('connection', socket);
  });
}
