// The webhook's HTTPS endpoint: AdmissionReview in, AdmissionReview out, for
//   POST /mutate                                   a pod's own annotation or literal dnsPolicy
//   POST /mutate/namespace/<ClusterFirstWithAutopath|Custom>   called through the namespace label's
//                                                  selector, so the path carries the namespace's policy
// and a plain HTTP listener for probes and metrics. Nothing a request holds can end the process:
// a body kdns cannot read is a 400 and the next request is served as if nothing happened.

import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { nodeHttp } from '../lib/node/http.js';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isKdnsPolicy } from '../poddns/annotations.js';
import type { AdmissionDecision, AdmissionSettings } from '../poddns/admission.js';
import { decideRequest, MalformedReview, readReview, reviewResponse } from './review.js';
import type { AdmissionRequest } from './review.js';

/** kube-apiserver's own request body limit (3 MiB): no real AdmissionReview for a CREATE is larger. */
export const MAX_REVIEW_BYTES = 3 * 1024 * 1024;

/** What the certificate side hands the server; see certs.ts. */
export interface ServingMaterial {
  certPem: string;
  keyPem: string;
  notAfter: Date;
}
export interface ServingMaterialSource {
  current(): ServingMaterial;
  onChange(listener: (m: ServingMaterial) => void): void;
}

export interface WebhookServerOptions {
  host: string;
  port: number;
  /** Where /health, /ready and /metrics are served (plain HTTP); undefined: not served. */
  probes?: { host: string; port: number };
  metricsAt?: { host: string; port: number };
  certs: ServingMaterialSource;
  /** The settings now in force (the config file may be reloaded under a running server). */
  settings: () => AdmissionSettings | undefined;
  protectedNamespaces: ReadonlySet<string>;
  log: (line: string) => void;
}

export interface WebhookServer {
  readonly port: number;
  readonly probesPort?: number;
  readonly metricsPort?: number;
  readonly registry: Registry;
  close(): Promise<void>;
}

type Outcome = 'mutated' | 'allowed' | 'denied' | 'error';

interface WebhookMetrics {
  registry: Registry;
  admissions: Counter<'path' | 'result'>;
  duration: Histogram<'path' | 'result'>;
  rejected: Counter<'reason'>;
  certExpiry: Gauge;
}

function createMetrics(certs: ServingMaterialSource): WebhookMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    admissions: new Counter({ name: 'kdns_webhook_admissions_total', help: 'Admission requests answered, by path and result (mutated, allowed, denied, error).', labelNames: ['path', 'result'], registers: [registry] }),
    duration: new Histogram({
      name: 'kdns_webhook_admission_duration_seconds',
      help: 'Time from the request being read to the answer being written.',
      labelNames: ['path', 'result'],
      // An admission is answered in well under a millisecond; the API server's timeout is seconds.
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    rejected: new Counter({ name: 'kdns_webhook_rejected_requests_total', help: 'HTTP requests refused before admission (malformed, oversized, wrong method or path).', labelNames: ['reason'], registers: [registry] }),
    certExpiry: new Gauge({
      name: 'kdns_webhook_certificate_expiry_timestamp_seconds',
      help: 'When the serving certificate in use expires (Unix time).',
      registers: [registry],
      collect() {
        this.set(certs.current().notAfter.getTime() / 1000);
      },
    }),
  };
}

const NAMESPACE_PATH = /^\/mutate\/namespace\/([A-Za-z]+)$/;

/** `/mutate` → no namespace policy; `/mutate/namespace/Custom` → Custom; anything else → not ours. */
export function routeFor(path: string): { namespacePolicy?: string } | undefined {
  if (path === '/mutate') return {};
  const m = NAMESPACE_PATH.exec(path);
  return m !== null && isKdnsPolicy(m[1]) ? { namespacePolicy: m[1] as string } : undefined;
}

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const metrics = createMetrics(opts.certs);
  const https = createHttpsServer({ ...tlsOptions(opts.certs.current()), minVersion: 'TLSv1.2' }, (req, res) => {
    void handle(req, res, opts, metrics);
  });
  // A new certificate is used by the next handshake; connections already open keep theirs.
  opts.certs.onChange((m) => https.setSecureContext(tlsOptions(m)));
  https.requestTimeout = 10_000;
  https.headersTimeout = 5_000;
  https.on('tlsClientError', () => metrics.rejected.inc({ reason: 'tls' }));
  const servers: Array<HttpsServer | HttpServer> = [https];
  const port = await listen(https, opts.host, opts.port);
  const probes = opts.probes ? await startProbes(opts.probes, opts, metrics, servers) : undefined;
  const metricsPort = opts.metricsAt ? await startMetrics(opts.metricsAt, metrics, servers) : undefined;
  return {
    port,
    ...(probes !== undefined ? { probesPort: probes } : {}),
    ...(metricsPort !== undefined ? { metricsPort } : {}),
    registry: metrics.registry,
    close: async () => {
      await Promise.all(servers.map((s) => closeServer(s)));
    },
  };
}

function tlsOptions(m: ServingMaterial): SecureContextOptions {
  return { cert: m.certPem, key: m.keyPem };
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: WebhookServerOptions, metrics: WebhookMetrics): Promise<void> {
  const started = process.hrtime.bigint();
  const path = (req.url ?? '').split('?')[0] ?? '';
  const route = routeFor(path);
  if (route === undefined) return refuse(res, metrics, 404, 'path', `no admission endpoint at ${path}`, req);
  if (req.method !== 'POST') return refuse(res, metrics, 405, 'method', `${req.method ?? ''} not allowed: POST an AdmissionReview`, req);
  const body = await readBody(req, MAX_REVIEW_BYTES);
  if (body === 'too-large') return refuse(res, metrics, 400, 'oversized', `AdmissionReview larger than ${MAX_REVIEW_BYTES} bytes`, req);
  if (body === 'aborted') return;
  let request: AdmissionRequest;
  try {
    request = readReview(JSON.parse(body.toString('utf8')) as unknown);
  } catch (e) {
    const why = e instanceof MalformedReview ? e.message : `not JSON: ${(e as Error).message}`;
    return refuse(res, metrics, 400, 'malformed', `malformed AdmissionReview: ${why}`, req);
  }
  const settings = opts.settings();
  let decision: AdmissionDecision;
  let outcome: Outcome;
  if (settings === undefined) {
    // No valid configuration yet: say so and let the pod through unchanged (failurePolicy Ignore would do the same).
    decision = { kind: 'skip', reason: 'no valid configuration' };
    outcome = 'error';
  } else {
    try {
      decision = decideRequest(request, { settings, protectedNamespaces: opts.protectedNamespaces, ...route });
      outcome = decision.kind === 'mutate' ? 'mutated' : decision.kind === 'deny' ? 'denied' : 'allowed';
    } catch (e) {
      opts.log(`webhook: error deciding ${describe(request)}: ${(e as Error).stack ?? String(e)}`);
      decision = { kind: 'skip', reason: 'internal error' };
      outcome = 'error';
    }
  }
  if (decision.kind === 'deny') opts.log(`webhook: denied ${describe(request)}${request.dryRun ? ' (dry run)' : ''}: ${decision.message}`);
  send(res, 200, reviewResponse(request.uid, decision));
  const labels = { path: route.namespacePolicy !== undefined ? '/mutate/namespace' : '/mutate', result: outcome };
  metrics.admissions.inc(labels);
  metrics.duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
}

function describe(request: AdmissionRequest): string {
  const pod = (request.object ?? {}) as { metadata?: { name?: string; generateName?: string } };
  const name = pod.metadata?.name ?? (pod.metadata?.generateName !== undefined ? `${pod.metadata.generateName}*` : '?');
  return `pod ${request.namespace ?? ''}/${name} (uid ${request.uid})`;
}

function refuse(res: ServerResponse, metrics: WebhookMetrics, code: number, reason: string, message: string, req: IncomingMessage): void {
  metrics.rejected.inc({ reason });
  send(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message });
  // A body not read to its end would keep arriving on this connection: close it after the answer.
  if (!req.complete) res.once('finish', () => req.destroy());
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The whole body, or why not: over `limit` bytes (stops reading at once), or the client went away. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) return resolve('too-large');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve('aborted'));
    req.on('close', () => resolve(size > limit ? 'too-large' : req.complete ? Buffer.concat(chunks) : 'aborted'));
  });
}

async function startProbes(at: { host: string; port: number }, opts: WebhookServerOptions, metrics: WebhookMetrics, servers: Array<HttpsServer | HttpServer>): Promise<number> {
  const server = nodeHttp.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/health') return void res.writeHead(200).end('OK');
    if (path === '/ready') {
      const ready = opts.settings() !== undefined;
      return void res.writeHead(ready ? 200 : 503).end(ready ? 'OK' : 'no valid configuration');
    }
    if (path === '/metrics' && opts.metricsAt === undefined) return void serveMetrics(res, metrics);
    res.writeHead(404).end();
  });
  servers.push(server);
  return listen(server, at.host, at.port);
}

async function startMetrics(at: { host: string; port: number }, metrics: WebhookMetrics, servers: Array<HttpsServer | HttpServer>): Promise<number> {
  const server = nodeHttp.createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] === '/metrics') return void serveMetrics(res, metrics);
    res.writeHead(404).end();
  });
  servers.push(server);
  return listen(server, at.host, at.port);
}

function serveMetrics(res: ServerResponse, metrics: WebhookMetrics): void {
  metrics.registry.metrics().then(
    (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
    (e: Error) => res.writeHead(500).end(e.message),
  );
}

function listen(server: HttpsServer | HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host === '' ? undefined : host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: HttpsServer | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
