// `prometheus { tls WEB_CONFIG }`: the TLS of the /metrics listener, read from a web
// configuration file in the format of the Prometheus exporter toolkit (the one CoreDNS 1.14.3+
// reads, and node_exporter's --web.config.file), so one file serves both. kdns takes the TLS part
// of it; the parts it cannot honour are refused by name rather than ignored, since a scraper
// or an auditor would otherwise believe them in force.
//
// A file with no `tls_server_config` (or an empty one) means plain HTTP, as in the toolkit.
// Relative paths inside the file are taken from the file's own folder, as the toolkit does.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import type { ClientAuth, TlsSettings } from '../../server/plugin.js';
import { checkTlsSettings } from '../../server/tlslistener.js';
import type { HttpsIdentity } from '../pkg/endpoint.js';

/** Go's tls.ClientAuthType names (the toolkit's client_auth_type) → kdns's modes. */
const CLIENT_AUTH_TYPES: ReadonlyMap<string, ClientAuth> = new Map([
  ['NoClientCert', 'nocert'],
  ['RequestClientCert', 'request'],
  ['RequireAnyClientCert', 'require'],
  ['VerifyClientCertIfGiven', 'verify_if_given'],
  ['RequireAndVerifyClientCert', 'require_and_verify'],
]);

/** The toolkit's version names → Node's. */
const VERSIONS: ReadonlyMap<string, SecureVersion> = new Map([
  ['TLS10', 'TLSv1'],
  ['TLS11', 'TLSv1.1'],
  ['TLS12', 'TLSv1.2'],
  ['TLS13', 'TLSv1.3'],
]);
const VERSION_ORDER: readonly SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

const TLS_KEYS: ReadonlySet<string> = new Set(['cert_file', 'key_file', 'cert', 'key', 'client_ca_file', 'client_auth_type', 'min_version', 'max_version']);
/** Toolkit options kdns does not honour, and why (the error names them). */
const UNSUPPORTED: ReadonlyMap<string, string> = new Map([
  ['basic_auth_users', 'kdns does not check passwords on /metrics (protect it with client certificates: client_auth_type RequireAndVerifyClientCert)'],
  ['http_server_config', 'kdns sets no extra HTTP headers and always allows HTTP/1.1 only'],
  ['rate_limit', 'kdns does not rate-limit /metrics'],
  ['tls_server_config.cipher_suites', "kdns uses Node.js's default cipher suites"],
  ['tls_server_config.curve_preferences', "kdns uses Node.js's default curves"],
  ['tls_server_config.prefer_server_cipher_suites', "kdns uses Node.js's default cipher order"],
  ['tls_server_config.client_allowed_sans', 'kdns does not filter client certificates by subject alternative name'],
]);

/** A problem with the web configuration file, worded for the Corefile error around it. */
export class WebConfigError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringField(section: Record<string, unknown>, key: string): string | undefined {
  const v = section[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new WebConfigError(`tls_server_config.${key} must be a string`);
  return v;
}

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new WebConfigError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

function versionField(section: Record<string, unknown>, key: string, fallback: SecureVersion): SecureVersion {
  const name = stringField(section, key);
  if (name === undefined) return fallback;
  const v = VERSIONS.get(name);
  if (!v) throw new WebConfigError(`unknown TLS version "${name}" in tls_server_config.${key} (use ${[...VERSIONS.keys()].join(', ')})`);
  return v;
}

/**
 * Parses the text of a web configuration file (`dir` is its folder): the identity to serve
 * HTTPS with, or undefined for plain HTTP. Reads the certificate files it names.
 */
export function parseWebConfig(text: string, dir: string): HttpsIdentity | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new WebConfigError(`not YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  if (doc === null || doc === undefined) return undefined;
  if (!isRecord(doc)) throw new WebConfigError('expected a mapping with tls_server_config');
  for (const key of Object.keys(doc)) {
    const why = UNSUPPORTED.get(key);
    if (why) throw new WebConfigError(`${key} is not supported: ${why}`);
    if (key !== 'tls_server_config') throw new WebConfigError(`unknown field "${key}"`);
  }
  const section = doc['tls_server_config'];
  if (section === undefined || section === null) return undefined;
  if (!isRecord(section)) throw new WebConfigError('tls_server_config must be a mapping');
  for (const key of Object.keys(section)) {
    const why = UNSUPPORTED.get(`tls_server_config.${key}`);
    if (why) throw new WebConfigError(`tls_server_config.${key} is not supported: ${why}`);
    if (!TLS_KEYS.has(key)) throw new WebConfigError(`unknown field "${key}" in tls_server_config`);
  }
  const at = (p: string): string => (isAbsolute(p) ? p : resolve(dir, p));
  const certFile = stringField(section, 'cert_file');
  const keyFile = stringField(section, 'key_file');
  const certText = stringField(section, 'cert');
  const keyText = stringField(section, 'key');
  if (certFile === undefined && certText === undefined && keyFile === undefined && keyText === undefined) {
    if (Object.keys(section).length === 0) return undefined;
    throw new WebConfigError('tls_server_config needs cert_file (or cert) and key_file (or key)');
  }
  if (certFile !== undefined && certText !== undefined) throw new WebConfigError('tls_server_config has both cert_file and cert; give one');
  if (keyFile !== undefined && keyText !== undefined) throw new WebConfigError('tls_server_config has both key_file and key; give one');
  if (certFile === undefined && certText === undefined) throw new WebConfigError('tls_server_config has a key but no cert_file (or cert)');
  if (keyFile === undefined && keyText === undefined) throw new WebConfigError('tls_server_config has a certificate but no key_file (or key)');
  const authName = stringField(section, 'client_auth_type') ?? 'NoClientCert';
  const clientAuth = CLIENT_AUTH_TYPES.get(authName);
  if (!clientAuth) throw new WebConfigError(`unknown client_auth_type "${authName}" (use ${[...CLIENT_AUTH_TYPES.keys()].join(', ')})`);
  const caFile = stringField(section, 'client_ca_file');
  // As the toolkit: a CA with nothing asking for client certificates is a mistake, not a policy.
  if (caFile !== undefined && clientAuth === 'nocert') throw new WebConfigError('client_ca_file is set but client_auth_type is NoClientCert: set client_auth_type to verify client certificates');
  const minVersion = versionField(section, 'min_version', 'TLSv1.2');
  const maxVersion = versionField(section, 'max_version', 'TLSv1.3');
  if (VERSION_ORDER.indexOf(minVersion) > VERSION_ORDER.indexOf(maxVersion)) throw new WebConfigError(`min_version ${minVersion} is above max_version ${maxVersion}`);
  const settings: TlsSettings = {
    cert: certText !== undefined ? Buffer.from(certText) : readFile(at(certFile as string), 'cert_file'),
    key: keyText !== undefined ? Buffer.from(keyText) : readFile(at(keyFile as string), 'key_file'),
    clientAuth,
    ...(caFile !== undefined ? { ca: readFile(at(caFile), 'client_ca_file') } : {}),
  };
  try {
    checkTlsSettings(settings);
  } catch (e) {
    throw new WebConfigError(`the certificate and key do not make a TLS identity: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { settings, minVersion, maxVersion };
}

/** Reads and parses the web configuration file at `path`. */
export function loadWebConfig(path: string): HttpsIdentity | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new WebConfigError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return parseWebConfig(text, dirname(path));
}
