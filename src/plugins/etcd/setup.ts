// `etcd` setup: read the block, check the TLS files now (a typo is a Corefile error, not a
// SERVFAIL at the first query), and build the plugin with its etcd client.

import { readFileSync } from 'node:fs';
import { argPosition, blockProperties, expectArgs, invalidArg, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { parseFallthrough } from '../pkg/fallthrough.js';
import { normalizeZones } from '../pkg/zones.js';
import type { EtcdTls } from './client.js';
import { DEFAULT_ENDPOINT, DEFAULT_MAX_LEASE_TTL, DEFAULT_MIN_LEASE_TTL, DEFAULT_PATH, EtcdPlugin, type EtcdConfig } from './handler.js';

/** `30`, `30s`, `5m`, `2h30m` → whole seconds (at least 1). */
function parseLeaseTtl(prop: Directive): number {
  const [text] = expectArgs(prop, 1, 1) as [string];
  const ms = parseDuration(text, argPosition(prop, 0), prop.name, { bareSeconds: true, minMs: 1000 });
  return Math.floor(ms / 1000);
}

function readPem(prop: Directive, index: number, corefilePath: string): string {
  const path = corefileRelative(prop.args[index] as string, corefilePath);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw CorefileError.at(argPosition(prop, index), `tls: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** An endpoint URL; `host:port` without a scheme (which etcd's Go client takes) is http. */
function endpointUrl(prop: Directive, given: string): string {
  const text = given.includes('://') ? given : `http://${given}`;
  try {
    const url = new URL(text);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.pathname === '/') return text;
  } catch {
    // reported below
  }
  return invalidArg(prop, given, 'expected an http:// or https:// URL such as http://localhost:2379');
}

/**
 * `tls` takes CoreDNS's forms: nothing (system CAs), CACERT, CERT KEY, or CERT KEY CACERT.
 */
function parseTls(prop: Directive, corefilePath: string): EtcdTls {
  const n = expectArgs(prop, 0, 3).length;
  if (n === 0) return {};
  if (n === 1) return { ca: readPem(prop, 0, corefilePath) };
  const pair = { cert: readPem(prop, 0, corefilePath), key: readPem(prop, 1, corefilePath) };
  return n === 3 ? { ...pair, ca: readPem(prop, 2, corefilePath) } : pair;
}

/**
 * `etcd [ZONES...] { fallthrough [ZONES...]  path PATH  endpoint URL...  credentials USER PASS
 * tls [CERT KEY] [CACERT]  min-lease-ttl D  max-lease-ttl D }`.
 */
export function parseEtcd(d: Directive, blockZones: readonly string[], corefilePath: string): EtcdConfig {
  const zones = d.args.length > 0 ? d.args.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const config: EtcdConfig = {
    zones,
    path: DEFAULT_PATH,
    client: { endpoints: [DEFAULT_ENDPOINT] },
    minLeaseTtl: DEFAULT_MIN_LEASE_TTL,
    maxLeaseTtl: DEFAULT_MAX_LEASE_TTL,
  };
  for (const prop of blockProperties(d, 'etcd')) {
    switch (prop.name) {
      case 'fallthrough':
        config.fallthrough = parseFallthrough(prop);
        break;
      case 'path': {
        const [path] = expectArgs(prop, 1, 1) as [string];
        if (path.replaceAll('/', '') === '') invalidArg(prop, path, 'the path names a key prefix, such as /skydns');
        config.path = path;
        break;
      }
      case 'endpoint':
        config.client.endpoints = expectArgs(prop, 1).map((u) => endpointUrl(prop, u));
        break;
      case 'credentials': {
        const [username, password] = expectArgs(prop, 2, 2) as [string, string];
        config.client.credentials = { username, password };
        break;
      }
      case 'tls':
        config.client.tls = parseTls(prop, corefilePath);
        break;
      case 'min-lease-ttl':
        config.minLeaseTtl = parseLeaseTtl(prop);
        break;
      case 'max-lease-ttl':
        config.maxLeaseTtl = parseLeaseTtl(prop);
        break;
      case 'stubzones':
      case 'debug':
      case 'upstream':
        // Accepted by CoreDNS for old Corefiles and ignored there too.
        break;
      default:
        unknownProperty(prop, 'etcd');
    }
  }
  if (config.minLeaseTtl > config.maxLeaseTtl) {
    throw CorefileError.at(d, `min-lease-ttl (${config.minLeaseTtl}s) is larger than max-lease-ttl (${config.maxLeaseTtl}s)`);
  }
  return config;
}

export const setup: SetupFn = (ctx) => EtcdPlugin.connect(parseEtcd(ctx.directive, ctx.block.zones, ctx.corefilePath), ctx.shared.log.plugin('etcd'));
