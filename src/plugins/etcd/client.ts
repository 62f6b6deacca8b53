// A small etcd v3 client over its JSON gateway (HTTP/1.1, base64 keys and values), which etcd
// serves on its client port beside gRPC: range reads, lease TTLs and authentication are all
// the etcd plugin needs, and this avoids a gRPC stack. Endpoints are tried in order.

import type { Agent as HttpAgent } from 'node:http';
import { nodeHttp } from '../../lib/node/http.js';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface EtcdTls {
  /** PEM contents. */
  cert?: string;
  key?: string;
  ca?: string;
}

export interface EtcdClientOptions {
  endpoints: string[];
  /** With TLS every endpoint is spoken to over HTTPS. */
  tls?: EtcdTls;
  credentials?: { username: string; password: string };
  timeoutMs?: number;
  /** The gateway's path prefix: `/v3` from etcd 3.4 on (`/v3beta` on 3.3). */
  apiPrefix?: string;
}

export interface KeyValue {
  key: string;
  value: string;
  /** The lease the key is attached to; "0" or absent when none. */
  lease: string;
}

export class EtcdError extends Error {
  override name = 'EtcdError';
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: unknown): string => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/** The end of the range holding every key that starts with `prefix` (etcd's prefix rule). */
export function prefixRangeEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if ((bytes[i] as number) < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i] = (bytes[i] as number) + 1;
      return end.toString('base64');
    }
  }
  return Buffer.from([0]).toString('base64'); // every key
}

export class EtcdClient {
  private readonly agent: HttpAgent | HttpsAgent | undefined;
  private readonly timeoutMs: number;
  private readonly prefix: string;
  private token: string | undefined;

  constructor(private readonly opts: EtcdClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.prefix = opts.apiPrefix ?? '/v3';
    if (opts.tls) this.agent = new HttpsAgent({ keepAlive: true, minVersion: 'TLSv1.2', ...opts.tls });
  }

  /** The key itself, or with `prefix` every key below it. */
  async range(key: string, prefix: boolean): Promise<KeyValue[]> {
    const body = prefix ? { key: b64(key), range_end: prefixRangeEnd(key) } : { key: b64(key) };
    const r = (await this.call('/kv/range', body)) as { kvs?: Array<Record<string, unknown>> };
    return (r.kvs ?? []).map((kv) => ({ key: unb64(kv['key']), value: unb64(kv['value']), lease: typeof kv['lease'] === 'string' ? kv['lease'] : '0' }));
  }

  /** Seconds left on a lease (-1 when it has expired). */
  async leaseTtl(id: string): Promise<number> {
    const r = (await this.call('/lease/timetolive', { ID: id })) as { TTL?: string | number };
    return Number(r.TTL ?? -1);
  }

  close(): void {
    this.agent?.destroy();
  }

  private async call(path: string, body: unknown): Promise<unknown> {
    if (this.opts.credentials && this.token === undefined) await this.authenticate();
    try {
      return await this.post(path, body);
    } catch (e) {
      // An expired token: log in again once.
      if (this.opts.credentials && e instanceof EtcdError && /token|auth/i.test(e.message)) {
        await this.authenticate();
        return this.post(path, body);
      }
      throw e;
    }
  }

  private async authenticate(): Promise<void> {
    const c = this.opts.credentials as { username: string; password: string };
    this.token = undefined;
    const r = (await this.post('/auth/authenticate', { name: c.username, password: c.password })) as { token?: string };
    if (typeof r.token !== 'string') throw new EtcdError('etcd authentication gave no token');
    this.token = r.token;
  }

  /** POSTs to each endpoint in turn until one answers. */
  private async post(path: string, body: unknown): Promise<unknown> {
    let last: Error = new EtcdError('no etcd endpoint');
    for (const endpoint of this.opts.endpoints) {
      try {
        return await this.postTo(endpoint, path, body);
      } catch (e) {
        if (e instanceof EtcdError) throw e; // etcd answered: another endpoint would say the same
        last = e as Error;
      }
    }
    throw new Error(`etcd unreachable: ${last.message}`);
  }

  private postTo(endpoint: string, path: string, body: unknown): Promise<unknown> {
    const url = new URL(`${this.prefix}${path}`, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
    const tls = this.opts.tls !== undefined || url.protocol === 'https:';
    if (tls) url.protocol = 'https:';
    const payload = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': payload.length };
    if (this.token !== undefined) headers['authorization'] = this.token;
    return new Promise((resolve, reject) => {
      const send = tls ? httpsRequest : nodeHttp.request;
      const req = send(url, { method: 'POST', headers, agent: this.agent, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            reject(new EtcdError(`etcd ${url.pathname}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
            return;
          }
          if (res.statusCode !== 200) {
            const msg = (json as { error?: string; message?: string }).message ?? (json as { error?: string }).error ?? text.slice(0, 200);
            reject(new EtcdError(`etcd ${url.pathname}: HTTP ${res.statusCode}: ${msg}`));
            return;
          }
          resolve(json);
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}
