// The DNS resource's validation, written once: this schema goes into the CRD (deploy/) for the API
// server, and the same schema plus the JavaScript meaning of its CEL rules is what
// `kdns validate` and the operator check. Only the cluster-domain rule is outside (./validate.ts),
// because the cluster domain is the operator's setting, not something a CRD can know.

import {
  DNS_SUBDOMAIN_MAX_LENGTH,
  DNS_SUBDOMAIN_PATTERN,
  GO_DURATION_PATTERN,
  IP_ADDRESS_PATTERN,
  IP_WITH_PORT_PATTERN,
  LABEL_KEY_PATTERN,
  LABEL_VALUE_MAX_LENGTH,
  LABEL_VALUE_PATTERN,
  SERVICE_NAME_MAX_LENGTH,
  SERVICE_NAME_PATTERN,
} from './addresses.js';
import { DNS_LOG_LEVELS, DNS_TRANSPORTS, FORWARDING_POLICIES, MANAGEMENT_STATES, PROTOCOL_STRATEGIES, UPSTREAM_TYPES } from '../lib/cluster/dnsresource.js';
import { FieldPath, duplicate, invalid, required } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import { isRecord } from './schema.js';
import type { CelImplementation, Schema, SchemaRules } from './schema.js';

/** Most upstreams one forwarding entry may list (CoreDNS's forward allows 15). */
export const MAX_UPSTREAMS = 15;
// The API server estimates the cost of every CEL rule from these bounds and refuses a CRD whose
// rules could run too long, so the lists the zone-uniqueness rule walks need a ceiling.
export const MAX_SERVERS = 32;
export const MAX_ZONES_PER_SERVER = 16;
export const MAX_FORWARD_PLUGINS = 32;

const PATTERN_MESSAGES = new Map<string, string>([
  [IP_WITH_PORT_PATTERN, 'must be an IPv4 or IPv6 address with an optional port (IP:port, [IPv6]:port; port 1-65535)'],
  [IP_ADDRESS_PATTERN, 'must be an IPv4 or IPv6 address (the port goes in its own field)'],
  [DNS_SUBDOMAIN_PATTERN, "must be a lower-case RFC 1123 subdomain: labels of a-z, 0-9 and '-', starting and ending with a letter or digit, separated by '.'"],
  [SERVICE_NAME_PATTERN, "must be an RFC 6335 service name: a-z, 0-9 and single '-' between them"],
  [LABEL_VALUE_PATTERN, "must be a label value: A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit"],
  [GO_DURATION_PATTERN, 'must be a duration such as 30s, 5m or 1h'],
]);

// ---- CEL rules: the text the API server evaluates, and what it means here ----

const RULE_NAME_IS_DEFAULT = "self.metadata.name == 'default'";
const RULE_SERVICE_NAME_HAS_LETTER = "self.matches('[a-z]')";
const RULE_TLS_NEEDS_SERVER_NAME = "!has(self.transport) || self.transport != 'TLS' || (has(self.tls) && size(self.tls.serverName) > 0)";
const RULE_TLS_NEEDS_NETWORK_UPSTREAMS =
  "!has(self.transportConfig) || !has(self.transportConfig.transport) || self.transportConfig.transport != 'TLS' || (has(self.upstreams) && size(self.upstreams) > 0 && self.upstreams.all(u, u.type == 'Network'))";
const RULE_NETWORK_NEEDS_ADDRESS = "self.type != 'Network' || has(self.address)";
const RULE_LABEL_KEYS = `self.all(k, k.matches(r'${LABEL_KEY_PATTERN}'))`;
const RULE_EXISTS_HAS_NO_VALUE = "!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0";
const RULE_EMPTY_KEY_NEEDS_EXISTS = "(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')";
const RULE_TOLERATION_SECONDS_NEED_NO_EXECUTE = "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')";
const RULE_ZONES_UNIQUE =
  '!has(self.servers) || self.servers.all(s, s.zones.all(z, self.servers.filter(t, z in t.zones).size() == 1' +
  ' && (!has(self.pluginConfig) || !has(self.pluginConfig.forwardPlugins) || !self.pluginConfig.forwardPlugins.exists(p, p.domain == z))))';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const when = (cond: boolean, err: () => FieldError): FieldError[] => (cond ? [err()] : []);

const CEL = new Map<string, CelImplementation>([
  [
    RULE_NAME_IS_DEFAULT,
    (self, path) => {
      const name = isRecord(self) && isRecord(self['metadata']) ? self['metadata']['name'] : undefined;
      if (name === undefined) return [required(path.child('metadata', 'name'))];
      return when(name !== 'default', () => invalid(path.child('metadata', 'name'), name, 'the operator manages only the DNS named "default"'));
    },
  ],
  [RULE_SERVICE_NAME_HAS_LETTER, (self, path) => when(typeof self === 'string' && !/[a-z]/.test(self), () => invalid(path, self, 'must contain at least one letter'))],
  [
    RULE_TLS_NEEDS_SERVER_NAME,
    (self, path) => {
      if (!isRecord(self) || self['transport'] !== 'TLS') return [];
      const tls = self['tls'];
      const serverName = isRecord(tls) ? str(tls['serverName']) : undefined;
      return when(!serverName, () => required(path.child('tls', 'serverName'), 'TLS transport needs the name the upstreams present in their certificates'));
    },
  ],
  [
    RULE_TLS_NEEDS_NETWORK_UPSTREAMS,
    (self, path) => {
      if (!isRecord(self) || !isRecord(self['transportConfig']) || self['transportConfig']['transport'] !== 'TLS') return [];
      const upstreams = self['upstreams'];
      if (!Array.isArray(upstreams) || upstreams.length === 0) {
        return [required(path.child('upstreams'), 'TLS transport needs Network upstreams with IP addresses; /etc/resolv.conf cannot be used with TLS')];
      }
      return upstreams.flatMap((u, i) =>
        when(isRecord(u) && u['type'] !== 'Network', () =>
          invalid(path.child('upstreams').index(i).child('type'), isRecord(u) ? u['type'] : u, 'TLS transport needs Network upstreams with IP addresses'),
        ),
      );
    },
  ],
  [
    RULE_NETWORK_NEEDS_ADDRESS,
    (self, path) => when(isRecord(self) && self['type'] === 'Network' && self['address'] === undefined, () => required(path.child('address'), 'a Network upstream needs an address')),
  ],
  [
    RULE_LABEL_KEYS,
    (self, path) => {
      if (!isRecord(self)) return [];
      const re = new RegExp(LABEL_KEY_PATTERN);
      return Object.keys(self)
        .filter((k) => !re.test(k))
        .map((k) => invalid(path.key(k), k, "must be a label key: an optional DNS-subdomain prefix and '/', then a name of A-Z, a-z, 0-9, '-', '_', '.'"));
    },
  ],
  [
    RULE_EXISTS_HAS_NO_VALUE,
    (self, path) =>
      when(isRecord(self) && self['operator'] === 'Exists' && !!str(self['value']), () =>
        invalid(path.child('value'), self && isRecord(self) ? self['value'] : undefined, 'must be empty when `operator` is \'Exists\''),
      ),
  ],
  [
    RULE_EMPTY_KEY_NEEDS_EXISTS,
    (self, path) =>
      when(isRecord(self) && !str(self['key']) && self['operator'] !== 'Exists', () =>
        invalid(path.child('operator'), isRecord(self) ? (self['operator'] ?? 'Equal') : undefined, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'),
      ),
  ],
  [
    RULE_TOLERATION_SECONDS_NEED_NO_EXECUTE,
    (self, path) =>
      when(isRecord(self) && self['tolerationSeconds'] !== undefined && self['effect'] !== 'NoExecute', () =>
        invalid(path.child('effect'), isRecord(self) ? (self['effect'] ?? '') : undefined, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
      ),
  ],
  [RULE_ZONES_UNIQUE, (self, path) => duplicateZones(self, path)],
]);

const isProposal = (owner: string): boolean => owner.includes('.forwardPlugins[');

/** Every zone of spec.servers and every domain of spec.pluginConfig.forwardPlugins, once. */
function duplicateZones(spec: unknown, path: FieldPath): FieldError[] {
  if (!isRecord(spec)) return [];
  const first = new Map<string, { owner: string; at: string }>();
  const errors: FieldError[] = [];
  const note = (zone: unknown, owner: string, at: FieldPath): void => {
    if (typeof zone !== 'string') return;
    const key = zone.toLowerCase().replace(/\.$/, '');
    const seen = first.get(key);
    if (seen === undefined) first.set(key, { owner, at: at.toString() });
    // A repeat inside one server is the zones list's own (set) error, and a repeated proposal
    // domain the forwardPlugins list's own (map key) error.
    else if (seen.owner !== owner && !(isProposal(owner) && isProposal(seen.owner))) errors.push({ ...duplicate(at, zone), detail: `already forwarded by ${seen.at}` });
  };
  const servers = spec['servers'];
  if (Array.isArray(servers)) {
    servers.forEach((s, i) => {
      const zones = isRecord(s) ? s['zones'] : undefined;
      const owner = path.child('servers').index(i);
      if (Array.isArray(zones)) zones.forEach((z, j) => note(z, owner.toString(), owner.child('zones').index(j)));
    });
  }
  const plugins = isRecord(spec['pluginConfig']) ? spec['pluginConfig']['forwardPlugins'] : undefined;
  if (Array.isArray(plugins)) {
    plugins.forEach((p, i) => {
      const owner = path.child('pluginConfig', 'forwardPlugins').index(i);
      if (isRecord(p)) note(p['domain'], owner.toString(), owner.child('domain'));
    });
  }
  return errors;
}

// ---- the schema ----

const subdomain = (description: string): Schema => ({
  type: 'string',
  description,
  maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
  pattern: DNS_SUBDOMAIN_PATTERN,
});

const policy = (description: string): Schema => ({ type: 'string', description, enum: FORWARDING_POLICIES });

const upstreamAddresses = (description: string): Schema => ({
  type: 'array',
  description,
  minItems: 1,
  maxItems: MAX_UPSTREAMS,
  'x-kubernetes-list-type': 'set',
  items: { type: 'string', maxLength: 47, pattern: IP_WITH_PORT_PATTERN },
});

const protocolStrategy: Schema = {
  type: 'string',
  description: 'How to reach the upstreams: "" (UDP, TCP when a reply is truncated) or "TCP" (always TCP).',
  enum: PROTOCOL_STRATEGIES,
};

const transportConfig: Schema = {
  type: 'object',
  description: 'Transport to the upstreams: Cleartext (default) or TLS (DNS over TLS, port 853 unless given).',
  properties: {
    transport: { type: 'string', enum: DNS_TRANSPORTS },
    tls: {
      type: 'object',
      required: ['serverName'],
      properties: {
        serverName: { type: 'string', description: 'Name the upstreams present in their certificates.', maxLength: DNS_SUBDOMAIN_MAX_LENGTH, pattern: DNS_SUBDOMAIN_PATTERN },
        caBundle: {
          type: 'object',
          description: 'ConfigMap in the DNS namespace holding ca-bundle.crt; absent = system trust store.',
          required: ['name'],
          properties: { name: { type: 'string', maxLength: DNS_SUBDOMAIN_MAX_LENGTH, pattern: DNS_SUBDOMAIN_PATTERN } },
        },
      },
    },
  },
  'x-kubernetes-validations': [{ rule: RULE_TLS_NEEDS_SERVER_NAME, message: 'TLS transport needs tls.serverName' }],
};

const toleration: Schema = {
  type: 'object',
  properties: {
    key: { type: 'string', maxLength: 316 },
    operator: { type: 'string', enum: ['Exists', 'Equal'] },
    value: { type: 'string', maxLength: LABEL_VALUE_MAX_LENGTH },
    effect: { type: 'string', enum: ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
    tolerationSeconds: { type: 'integer' },
  },
  'x-kubernetes-validations': [
    { rule: RULE_EXISTS_HAS_NO_VALUE, message: "value must be empty when operator is 'Exists'" },
    { rule: RULE_EMPTY_KEY_NEEDS_EXISTS, message: 'operator must be Exists when key is empty' },
    { rule: RULE_TOLERATION_SECONDS_NEED_NO_EXECUTE, message: "effect must be 'NoExecute' when tolerationSeconds is set" },
  ],
};

const specSchema: Schema = {
  type: 'object',
  description: 'Desired cluster DNS: forwarding, upstreams, cache, logging and where DNS pods run.',
  properties: {
    pluginConfig: {
      type: 'object',
      description: 'The forwarding proposal\'s shape; spec.servers is the current one. Both may be used; zones may not overlap.',
      properties: {
        forwardPlugins: {
          type: 'array',
          maxItems: MAX_FORWARD_PLUGINS,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['domain'],
          items: {
            type: 'object',
            required: ['domain', 'nameServers'],
            properties: {
              domain: subdomain('Queries for this domain and below go to nameServers. Not the cluster domain or under it.'),
              nameServers: upstreamAddresses('IPv4/IPv6 addresses with optional port; at most 15.'),
              policy: policy('Order in which nameServers are tried; default Random.'),
            },
          },
        },
      },
    },
    servers: {
      type: 'array',
      description: 'Forwarding for zones outside the cluster domain; the longest matching zone wins.',
      maxItems: MAX_SERVERS,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        required: ['name', 'zones', 'forwardPlugin'],
        properties: {
          name: {
            type: 'string',
            description: 'Unique name of this server (RFC 6335 service name).',
            maxLength: SERVICE_NAME_MAX_LENGTH,
            pattern: SERVICE_NAME_PATTERN,
            'x-kubernetes-validations': [{ rule: RULE_SERVICE_NAME_HAS_LETTER, message: 'must contain at least one letter' }],
          },
          zones: {
            type: 'array',
            minItems: 1,
            maxItems: MAX_ZONES_PER_SERVER,
            'x-kubernetes-list-type': 'set',
            items: subdomain('A zone this server forwards. Not the cluster domain or under it.'),
          },
          forwardPlugin: {
            type: 'object',
            required: ['upstreams'],
            properties: {
              upstreams: upstreamAddresses('IPv4/IPv6 addresses with optional port; at most 15.'),
              policy: policy('Order in which upstreams are tried; default Random.'),
              protocolStrategy,
              transportConfig,
            },
          },
        },
      },
    },
    upstreamResolvers: {
      type: 'object',
      description: 'Where the default (".") server forwards; default /etc/resolv.conf, Sequential.',
      properties: {
        upstreams: {
          type: 'array',
          maxItems: MAX_UPSTREAMS,
          items: {
            type: 'object',
            required: ['type'],
            properties: {
              // "" is SystemResolvConf; address and port are ignored unless Network (API servers default port to 53 on every upstream).
              type: { type: 'string', enum: UPSTREAM_TYPES },
              address: { type: 'string', maxLength: 39, pattern: IP_ADDRESS_PATTERN },
              port: { type: 'integer', minimum: 1, maximum: 65535 },
            },
            'x-kubernetes-validations': [
              { rule: RULE_NETWORK_NEEDS_ADDRESS, message: 'a Network upstream needs an address' },
            ],
          },
        },
        policy: policy('Order in which upstreams are tried; default Sequential.'),
        protocolStrategy,
        transportConfig,
      },
      'x-kubernetes-validations': [{ rule: RULE_TLS_NEEDS_NETWORK_UPSTREAMS, message: 'TLS transport needs Network upstreams with IP addresses' }],
    },
    cache: {
      type: 'object',
      description: 'Caps on cached TTLs; default 900s positive, 30s negative.',
      properties: {
        positiveTTL: { type: 'string', pattern: GO_DURATION_PATTERN },
        negativeTTL: { type: 'string', pattern: GO_DURATION_PATTERN },
      },
    },
    logLevel: { type: 'string', description: 'Query logging: Normal (errors), Debug (+denials), Trace (all).', enum: DNS_LOG_LEVELS },
    operatorLogLevel: { type: 'string', enum: DNS_LOG_LEVELS },
    managementState: { type: 'string', enum: MANAGEMENT_STATES },
    nodePlacement: {
      type: 'object',
      description: 'Where DNS pods run; defaults: kubernetes.io/os=linux and the control-plane toleration.',
      properties: {
        nodeSelector: {
          type: 'object',
          additionalProperties: { type: 'string', maxLength: LABEL_VALUE_MAX_LENGTH, pattern: LABEL_VALUE_PATTERN },
          'x-kubernetes-validations': [{ rule: RULE_LABEL_KEYS, message: 'keys must be label keys' }],
        },
        tolerations: { type: 'array', maxItems: 32, items: toleration },
      },
    },
  },
  'x-kubernetes-validations': [{ rule: RULE_ZONES_UNIQUE, message: 'each zone may be forwarded by one entry only' }],
};

/** The whole object's schema: the CRD's openAPIV3Schema. */
export const DNS_SCHEMA: Schema = {
  type: 'object',
  description: 'DNS configures the cluster DNS service (kdns); the operator manages the instance named "default".',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: specSchema,
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
  'x-kubernetes-validations': [{ rule: RULE_NAME_IS_DEFAULT, message: 'the operator manages only the DNS named "default"' }],
};

export const DNS_SCHEMA_RULES: SchemaRules = { cel: CEL, patternMessages: PATTERN_MESSAGES };
