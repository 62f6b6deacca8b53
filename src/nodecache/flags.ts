// `kdns nodecache`'s flags turned into the settings the shipped Corefile is rendered from. A bad
// flag is a FlagError naming the flag (the CLI exits 2 with it).
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseUpstream } from '../plugins/pkg/upstreams.js';
import { LOCAL_OPTION_CODE_MAX, LOCAL_OPTION_CODE_MIN } from '../plugins/pkg/searchoption.js';
import { defaultSettings, type NodeCacheSettings } from './corefile.js';

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export interface NodecacheFlags {
  conf?: string;
  localIp: string;
  port: string;
  clusterDns?: string;
  clusterDomain: string;
  /** Absent: the node's /etc/resolv.conf. */
  upstream?: string[];
  resolvConf: string;
  health?: string;
  metrics?: string;
  ednsOption: string;
  setupInterface?: boolean;
  interface: string;
  printCorefile?: boolean;
}

function usage(message: string): never {
  throw new FlagError(message);
}

/** A file's text, or undefined when it cannot be read (forward's TO reads resolv.conf files through this). */
export function readable(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function checkForwardTo(flag: string, value: string): void {
  const parsed = parseUpstream(value, readable);
  if (typeof parsed === 'string') usage(`${flag}: "${value}": ${parsed}`);
}

function intFlag(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < min || n > max) usage(`${flag}: "${text}" is not a number from ${min} to ${max}`);
  return n;
}

/** Flags → the settings the shipped Corefile is rendered from; a bad flag is a usage error naming it. */
export function settingsFromFlags(f: NodecacheFlags): NodeCacheSettings {
  const localIPs = f.localIp.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (localIPs.length === 0) usage('--local-ip: at least one address is needed');
  for (const ip of localIPs) if (isIP(ip) === 0) usage(`--local-ip: "${ip}" is not an IP address`);
  if (f.clusterDns === undefined || f.clusterDns === '') usage('--cluster-dns is required (the cluster DNS service address, IP or IP:PORT) unless --conf is given');
  checkForwardTo('--cluster-dns', f.clusterDns);
  const upstreams = f.upstream !== undefined && f.upstream.length > 0 ? f.upstream : ['/etc/resolv.conf'];
  for (const u of upstreams) checkForwardTo('--upstream', u);
  const domain = f.clusterDomain.replace(/\.$/, '');
  if (domain === '' || !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(domain)) usage(`--cluster-domain: "${f.clusterDomain}" is not a domain name`);
  const s = defaultSettings(f.clusterDns, localIPs);
  s.port = intFlag('--port', f.port, 1, 65535);
  s.clusterDomain = domain;
  s.upstreams = upstreams;
  s.nodeResolvConf = f.resolvConf;
  if (f.health !== undefined) s.health = f.health;
  if (f.metrics !== undefined) s.metrics = f.metrics;
  s.optionCode = intFlag('--edns-option', f.ednsOption, LOCAL_OPTION_CODE_MIN, LOCAL_OPTION_CODE_MAX);
  return s;
}
