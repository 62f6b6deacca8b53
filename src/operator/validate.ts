// Validation of the DNS resource, enforced (OpenShift documents most of these rules and checks
// few). Errors come back as API-server-shaped field errors; `kdns validate` prints them and the
// operator uses their paths to leave out just the broken entries.

import { DNS_API_VERSION, DNS_KIND } from '../lib/cluster/dnsresource.js';
import { FieldPath, invalid, required } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import { isSameOrSubdomain } from './addresses.js';
import { DNS_SCHEMA, DNS_SCHEMA_RULES } from './dnsschema.js';
import { isRecord, validateSchema } from './schema.js';

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

export interface DNSValidationOptions {
  /** Zones may not be this domain or under it: the cluster answers those itself. Default cluster.local. */
  clusterDomain?: string;
}

/** Every problem with a DNS resource, with paths such as `spec.servers[0].zones[1]`. */
export function validateDNSResource(obj: unknown, opts: DNSValidationOptions = {}): FieldError[] {
  if (!isRecord(obj)) return [invalid(FieldPath.root('<object>'), obj === null ? 'null' : typeof obj, 'must be a DNS object (a mapping with apiVersion, kind, metadata and spec)')];
  const header = checkTypeMeta(obj);
  if (header.length > 0) return header;
  return [...validateSchema(DNS_SCHEMA, obj, FieldPath.root(), DNS_SCHEMA_RULES), ...checkClusterDomain(obj['spec'], opts.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN)];
}

function checkTypeMeta(obj: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const apiVersion = obj['apiVersion'];
  const kind = obj['kind'];
  if (apiVersion === undefined) errors.push(required(FieldPath.root('apiVersion'), `must be ${DNS_API_VERSION}`));
  else if (apiVersion !== DNS_API_VERSION) errors.push(invalid(FieldPath.root('apiVersion'), apiVersion, `must be ${DNS_API_VERSION}`));
  if (kind === undefined) errors.push(required(FieldPath.root('kind'), `must be ${DNS_KIND}`));
  else if (kind !== DNS_KIND) errors.push(invalid(FieldPath.root('kind'), kind, `must be ${DNS_KIND}`));
  return errors;
}

/** The cluster domain is answered by the kubernetes plugin; forwarding it away would break service discovery. */
function checkClusterDomain(spec: unknown, clusterDomain: string): FieldError[] {
  if (!isRecord(spec)) return [];
  const errors: FieldError[] = [];
  const check = (zone: unknown, at: FieldPath): void => {
    if (typeof zone === 'string' && isSameOrSubdomain(zone, clusterDomain)) {
      errors.push(invalid(at, zone, `must not be the cluster domain ${JSON.stringify(clusterDomain)} or under it: the cluster answers those names itself`));
    }
  };
  const servers = spec['servers'];
  if (Array.isArray(servers)) {
    servers.forEach((s, i) => {
      const zones = isRecord(s) ? s['zones'] : undefined;
      if (Array.isArray(zones)) zones.forEach((z, j) => check(z, FieldPath.root('spec', 'servers').index(i).child('zones').index(j)));
    });
  }
  const plugins = isRecord(spec['pluginConfig']) ? spec['pluginConfig']['forwardPlugins'] : undefined;
  if (Array.isArray(plugins)) {
    plugins.forEach((p, i) => {
      if (isRecord(p)) check(p['domain'], FieldPath.root('spec', 'pluginConfig', 'forwardPlugins').index(i).child('domain'));
    });
  }
  return errors;
}
