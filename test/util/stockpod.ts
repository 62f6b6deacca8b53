// Test helper: what a stock kube-apiserver's Pod validation says about the DNS fields of a
// decoded Pod: dnsPolicy must be one of its four values, and dnsConfig's rules (shared with
// `kdns validate`, whose tables check them against the API server's messages). A mutation that
// leaves anything here fails the webhook tests.

import { FieldPath, unsupported } from '../../src/lib/cluster/field.js';
import type { FieldError } from '../../src/lib/cluster/field.js';
import type { PodSpec } from '../../src/lib/cluster/types.js';
import { STOCK_DNS_POLICIES } from '../../src/poddns/annotations.js';
import { validatePodDNSConfig } from '../../src/poddns/validate.js';

/** The API server lists supported values in this order in its message. */
const STOCK_ORDER = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];

export function validateStockPod(pod: Record<string, unknown>, opts: { relaxedSearch?: boolean } = {}): FieldError[] {
  const spec = (pod['spec'] ?? {}) as PodSpec & Record<string, unknown>;
  const path = FieldPath.root('spec');
  const errors: FieldError[] = [];
  // Defaulting happens before validation: an empty dnsPolicy is ClusterFirst.
  const policy = spec.dnsPolicy === undefined || spec.dnsPolicy === '' ? 'ClusterFirst' : spec.dnsPolicy;
  if (!STOCK_DNS_POLICIES.includes(policy)) errors.push(unsupported(path.child('dnsPolicy'), policy, STOCK_ORDER));
  if ('dnsParams' in spec) errors.push({ field: 'spec.dnsParams', reason: 'Forbidden', detail: 'unknown field: a stock API server has no such field' });
  errors.push(...validatePodDNSConfig(spec.dnsConfig, policy, path.child('dnsConfig'), { relaxedSearch: opts.relaxedSearch ?? false, clusterDomain: 'cluster.local' }));
  return errors;
}
