// Test helper: a stock cluster's admission path with kdns's webhook in it. The fake API server
// (list/watch/apply, Secrets, MutatingWebhookConfigurations) holds the MutatingWebhookConfiguration
// the install ships (rendered from deploy/ with kubectl kustomize, caBundle empty as applied);
// the webhook runs with its real certificate source against that API, so it creates its CA and
// writes the caBundle itself; the stand-in admission chain (admission.ts) calls it over TLS for
// each Pod create, trusting only the caBundle it finds stored at that moment.

import { CORE_RESOURCES, FakeApiServer, WEBHOOK_CERT_RESOURCES } from './fakeapi.js';
import type { ApiObject } from './fakeapi.js';
import type { AdmissionSettings } from '../../src/poddns/admission.js';
import { serviceDNSNames } from '../../src/cli/webhook.js';
import { startSecretCertSource } from '../../src/webhook/certs.js';
import type { SecretCertSourceOptions } from '../../src/webhook/certs.js';
import { startWebhookServer } from '../../src/webhook/server.js';
import type { WebhookServer } from '../../src/webhook/server.js';
import { installStandInAdmission, MWC_PATH } from './admission.js';
import type { StandIn } from './admission.js';
import { findObject, renderKustomization } from './deploy.js';
import { writeKubeconfig } from './kubeconfig.js';
import { waitFor } from './net.js';

export const WEBHOOK_CONFIGURATION = 'kdns-webhook';

export interface WebhookRigOptions {
  settings: AdmissionSettings;
  /** The install variant whose MutatingWebhookConfiguration is used (its namespace is the webhook's). */
  variant?: 'deploy/coredns' | 'deploy/nodecache' | 'deploy';
  /** Namespace labels (`dns.kdns.io/policy`), as the stand-in's namespace informer sees them. */
  namespaceLabels?: Record<string, Record<string, string>>;
  /** The stand-in keeps connections to the webhook open, as kube-apiserver does (benchmarks). */
  keepAlive?: boolean;
  /** Certificate lifetimes and checks, for rotation tests. */
  certTiming?: Partial<Pick<SecretCertSourceOptions, 'caValidityMs' | 'certValidityMs' | 'checkIntervalMs' | 'renewAfterFraction' | 'bundlePropagationMs'>>;
}

export interface WebhookRig {
  api: FakeApiServer;
  url: string;
  kubeconfig: string;
  namespace: string;
  standIn: StandIn;
  servers: WebhookServer[];
  /** Ports of the webhook replicas the Service leads to (a test may add a `kdns webhook` process's). */
  backends: number[];
  /** Resolves once every webhook of the stored configuration has a caBundle. */
  caBundleWritten(): Promise<void>;
  /** What the webhook's config file says from now on (as a reload would). */
  setSettings(settings: AdmissionSettings): void;
  /** POSTs a pod as a client would; resolves with the stored pod or the API's Status. */
  createPod(namespace: string, pod: Record<string, unknown>, fieldValidation?: 'Strict' | 'Warn' | 'Ignore'): Promise<{ code: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** The shipped configuration of `variant`, as `kubectl apply -k` would create it. */
export function shippedWebhookConfiguration(variant: string): { configuration: ApiObject; namespace: string } {
  const objects = renderKustomization(variant);
  const configuration = findObject(objects, 'MutatingWebhookConfiguration', WEBHOOK_CONFIGURATION) as ApiObject;
  const deployment = findObject(objects, 'Deployment', 'kdns-webhook') as { metadata: { namespace: string } };
  return { configuration, namespace: deployment.metadata.namespace };
}

/** Starts the API, `replicas` in-process webhooks (each with its own certificate source; 0: none), and the admission chain. */
export async function startWebhookRig(opts: WebhookRigOptions, replicas = 1): Promise<WebhookRig> {
  const api = new FakeApiServer([...CORE_RESOURCES, ...WEBHOOK_CERT_RESOURCES]);
  const url = await api.listen();
  const kubeconfig = writeKubeconfig(url);
  const { configuration, namespace } = shippedWebhookConfiguration(opts.variant ?? 'deploy/coredns');
  api.add(MWC_PATH, configuration);
  const servers: WebhookServer[] = [];
  let settings = opts.settings;
  const closers: Array<() => Promise<void>> = [];
  const { KubeConfig } = await import('@kubernetes/client-node');
  for (let i = 0; i < replicas; i++) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const certs = await startSecretCertSource({
      kubeConfig: kc,
      namespace,
      secretName: 'kdns-webhook-tls',
      webhookConfigurationName: WEBHOOK_CONFIGURATION,
      dnsNames: serviceDNSNames('kdns-webhook', namespace),
      log: () => undefined,
      ...opts.certTiming,
    });
    const server = await startWebhookServer({
      host: '127.0.0.1',
      port: 0,
      certs,
      settings: () => settings,
      protectedNamespaces: new Set(['kube-system', namespace]),
      log: () => undefined,
    });
    servers.push(server);
    closers.push(async () => {
      await server.close();
      await certs.close();
    });
  }
  let next = 0;
  const backends = servers.map((s) => s.port);
  const standIn = installStandInAdmission(api, {
    configurations: [WEBHOOK_CONFIGURATION],
    // kube-proxy's part: the Service's port reaches one of the replicas, round robin.
    resolveService: () => ({ host: '127.0.0.1', port: backends[next++ % backends.length] ?? 1 }),
    namespaceLabels: (ns) => opts.namespaceLabels?.[ns] ?? {},
    ...(opts.keepAlive !== undefined ? { keepAlive: opts.keepAlive } : {}),
  });
  const caBundleWritten = async (): Promise<void> => {
    await waitFor(() => ((api.get(MWC_PATH, undefined, WEBHOOK_CONFIGURATION)?.['webhooks'] as Array<{ clientConfig: { caBundle?: string } }>) ?? []).every((w) => (w.clientConfig.caBundle ?? '') !== ''), 20_000);
  };
  // The webhook has written the caBundle before the API server sends it anything.
  if (replicas > 0) await caBundleWritten();
  return {
    backends,
    caBundleWritten,
    api,
    url,
    kubeconfig,
    namespace,
    standIn,
    servers,
    setSettings: (next) => {
      settings = next;
    },
    createPod: (ns, pod, fieldValidation = 'Strict') => createPod(url, ns, pod, fieldValidation),
    close: async () => {
      for (const c of closers) await c();
      await api.close();
    },
  };
}

async function createPod(url: string, namespace: string, pod: Record<string, unknown>, fieldValidation: string): Promise<{ code: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/api/v1/namespaces/${namespace}/pods?fieldValidation=${fieldValidation}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pod) });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
}

