// The webhook's serving certificates, with no human in the loop. Two sources:
//
//   - startSecretCertSource: kdns is its own CA. The CA, the serving certificate and the state of
//     a CA rotation live in one Secret that every replica reads and writes (create; on
//     AlreadyExists adopt the winner's; update with the resourceVersion read; on Conflict re-read
//     and adopt), so all replicas serve certificates one caBundle trusts. Each replica also keeps
//     the caBundle of every webhook in the MutatingWebhookConfiguration equal to the CAs the
//     Secret names, checking every interval (a GitOps tool re-applying the manifest blanks it).
//   - startFileCertSource (certfiles.ts): tls.crt/tls.key from files (cert-manager or any Secret
//     mounted as a volume), reloaded when they change; the caBundle is someone else's job.
//
// Why the order of a CA rotation matters: the API server calls the webhook over TLS trusting only
// the caBundle in the configuration, and every replica presents whatever serving certificate it
// last read from the Secret. A replica that switches to a certificate its caller does not trust
// yet fails admissions; a bundle that drops a CA whose certificate a replica still presents fails
// them too. So a CA rotation goes in three steps, each one only after the one before has taken
// effect everywhere it must:
//
//   1. prepare: a new CA is added to the Secret as `next-ca`, signing nothing. The bundle is now
//      {current, next}; every replica patches it into the configuration.
//   2. switch: once this replica has seen the configuration trust the next CA (in every webhook's
//      caBundle) for `bundlePropagationMs` (the API servers read configurations through a cache),
//      the next CA becomes the signing CA and a serving certificate it signed goes into the
//      Secret. The old CA moves to `previous-ca`, still in the bundle, so replicas that have not
//      re-read the Secret yet keep presenting a trusted certificate.
//   3. retire: the old CA leaves the Secret, and so the bundle, once the last serving certificate
//      it signed has expired: no replica can present one it signed that is still valid.
//
// Renewing the serving certificate needs none of this (same CA, same bundle). A stale replica
// must not undo a newer bundle either: each check reads the configuration first, then the
// Secret, and patches the configuration with a JSON-patch test of the resourceVersion it read.
// Every writer writes the Secret before the configuration, so a replica that read an older
// Secret read the configuration before the newer writer patched it, and its patch fails the test
// (it retries from fresh reads) or lands first and is overwritten by the newer one.

import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { KubeConfig, V1MutatingWebhookConfiguration, V1Secret } from '@kubernetes/client-node';

export { startFileCertSource } from './certfiles.js';
export type { FileCertSourceOptions } from './certfiles.js';

export interface TlsMaterial {
  /** The serving certificate chain, leaf first (PEM). */
  certPem: string;
  keyPem: string;
  /** What the API server must trust: the signing CA, plus a CA being introduced or retired. */
  caBundlePem: string;
  /** When the serving certificate expires. */
  notAfter: Date;
}

export interface CertSource {
  current(): TlsMaterial;
  /** Called with the new material after each change (the server hands it to setSecureContext). */
  onChange(listener: (m: TlsMaterial) => void): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// X.509 with pkijs; keys and signatures from Node's WebCrypto.

/** Node's WebCrypto, handed to pkijs explicitly rather than through its process-wide engine. */
const cryptoEngine = new pkijs.CryptoEngine({ name: 'node', crypto: globalThis.crypto });
const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const OID = {
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;
/** GeneralName's CHOICE tag for a DNS name. */
const DNS_NAME = 2;
/** Backdating covers clocks that run behind the issuer's (an API server on another node). */
const MAX_BACKDATE_MS = 5 * 60_000;

export interface CertKeyPem {
  certPem: string;
  keyPem: string;
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

const floorToSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

/**
 * The validity of a certificate issued at `now` for `lifetimeMs`, in whole seconds as X.509
 * stores them: backdated by a tenth of the lifetime (at most 5 minutes) for clock skew, and
 * ending no later than `endBy` (a serving certificate never outlives the CA that signs it).
 */
export function validityFrom(now: number, lifetimeMs: number, endBy = Number.POSITIVE_INFINITY): Validity {
  const backdate = Math.min(MAX_BACKDATE_MS, lifetimeMs / 10);
  return { notBefore: new Date(floorToSecond(now - backdate)), notAfter: new Date(floorToSecond(Math.min(now + lifetimeMs, endBy))) };
}

/** RFC 5280: UTCTime through 2049, GeneralizedTime from 2050. */
function x509Time(d: Date): pkijs.Time {
  return new pkijs.Time({ type: d.getUTCFullYear() < 2050 ? pkijs.TimeType.UTCTime : pkijs.TimeType.GeneralizedTime, value: d });
}

function commonNameRdn(cn: string): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({ typesAndValues: [new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: cn }) })] });
}

/** A positive 128-bit serial whose first byte is never 0 (DER keeps it at 16 bytes). */
function randomSerial(): asn1js.Integer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return new asn1js.Integer({ valueHex: bytes });
}

function extension(extnID: string, critical: boolean, value: { toSchema(): asn1js.BaseBlock } | asn1js.BaseBlock): pkijs.Extension {
  const schema = value instanceof asn1js.BaseBlock ? value : value.toSchema();
  return new pkijs.Extension({ extnID, critical, extnValue: schema.toBER(false) });
}

/** keyUsage bits (RFC 5280 4.2.1.3), numbered from the most significant bit of the first byte. */
function keyUsage(bits: number[]): asn1js.BitString {
  const last = Math.max(...bits);
  const byte = bits.reduce((acc, b) => acc | (0x80 >> b), 0);
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]), unusedBits: 7 - last });
}
const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

function pem(label: string, der: ArrayBuffer | Uint8Array): string {
  const b64 = Buffer.from(der instanceof Uint8Array ? der : new Uint8Array(der)).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
}

async function newKeyPair(): Promise<{ keys: CryptoKeyPair; keyPem: string }> {
  const keys = await globalThis.crypto.subtle.generateKey(EC_P256, true, ['sign', 'verify']);
  const pkcs8 = await globalThis.crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { keys, keyPem: pem('PRIVATE KEY', pkcs8) };
}

/** An ECDSA P-256 private key in any PEM form Node reads, as a WebCrypto signing key. */
async function signingKey(keyPem: string): Promise<CryptoKey> {
  const der = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
  return globalThis.crypto.subtle.importKey('pkcs8', der, EC_P256, false, ['sign']);
}

async function keyIdentifier(cert: pkijs.Certificate): Promise<asn1js.OctetString> {
  return new asn1js.OctetString({ valueHex: await cert.getKeyHash('SHA-1', cryptoEngine) });
}

interface ToBeSigned {
  subject: string;
  issuer: string;
  validity: Validity;
  publicKey: CryptoKey;
  extensions: pkijs.Extension[];
  /** The issuer's key identifier (a CA signing itself: none). */
  authorityKeyId?: asn1js.OctetString;
}

async function signCertificate(tbs: ToBeSigned, issuerKey: CryptoKey): Promise<string> {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = randomSerial();
  cert.subject = commonNameRdn(tbs.subject);
  cert.issuer = commonNameRdn(tbs.issuer);
  cert.notBefore = x509Time(tbs.validity.notBefore);
  cert.notAfter = x509Time(tbs.validity.notAfter);
  await cert.subjectPublicKeyInfo.importKey(tbs.publicKey, cryptoEngine);
  cert.extensions = [...tbs.extensions, extension(OID.subjectKeyIdentifier, false, await keyIdentifier(cert))];
  if (tbs.authorityKeyId) cert.extensions.push(extension(OID.authorityKeyIdentifier, false, new pkijs.AuthorityKeyIdentifier({ keyIdentifier: tbs.authorityKeyId })));
  await cert.sign(issuerKey, 'SHA-256', cryptoEngine);
  return pem('CERTIFICATE', cert.toSchema(true).toBER(false));
}

/** A self-signed CA that signs serving certificates and nothing below them (pathLen 0). */
export async function issueCa(commonName: string, validity: Validity): Promise<CertKeyPem> {
  const { keys, keyPem } = await newKeyPair();
  const certPem = await signCertificate(
    {
      subject: commonName,
      issuer: commonName,
      validity,
      publicKey: keys.publicKey,
      extensions: [
        extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 })),
        extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
      ],
    },
    keys.privateKey,
  );
  return { certPem, keyPem };
}

/** A TLS server certificate for `dnsNames` (the first is also the subject's CN), signed by `ca`. */
export async function issueServingCert(ca: CertKeyPem, dnsNames: readonly string[], validity: Validity): Promise<CertKeyPem> {
  if (dnsNames.length === 0) throw new Error('dnsNames: at least one name is needed');
  const caCert = pkijs.Certificate.fromBER(new X509Certificate(ca.certPem).raw);
  const { keys, keyPem } = await newKeyPair();
  const certPem = await signCertificate(
    {
      subject: dnsNames[0]!,
      issuer: commonNameOf(new X509Certificate(ca.certPem)),
      validity,
      publicKey: keys.publicKey,
      authorityKeyId: await keyIdentifier(caCert),
      extensions: [
        extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false })),
        extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature])),
        extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth] })),
        extension(OID.subjectAltName, false, new pkijs.GeneralNames({ names: dnsNames.map((value) => new pkijs.GeneralName({ type: DNS_NAME, value })) })),
      ],
    },
    await signingKey(ca.keyPem),
  );
  return { certPem, keyPem };
}

// ---------------------------------------------------------------------------------------------
// Reading certificates back (Node's X509Certificate).

const PEM_CERT = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Every CERTIFICATE block of a PEM text, parsed; throws naming the block that does not parse. */
export function parseCertificates(text: string): X509Certificate[] {
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new Error('no PEM CERTIFICATE block');
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new Error(`certificate ${i + 1}: ${(e as Error).message}`);
    }
  });
}

export function commonNameOf(cert: X509Certificate): string {
  return /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? cert.subject;
}

/** DNS names of the subjectAltName extension ("DNS:a, DNS:b"). */
export function dnsNamesOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((n) => n.startsWith('DNS:'))
    .map((n) => n.slice(4));
}

const notBeforeOf = (c: X509Certificate): number => new Date(c.validFrom).getTime();
const notAfterOf = (c: X509Certificate): number => new Date(c.validTo).getTime();

/** When a certificate is due for renewal: after `fraction` of its validity. */
export function renewalTime(cert: X509Certificate, fraction: number): number {
  const from = notBeforeOf(cert);
  return from + fraction * (notAfterOf(cert) - from);
}

function ecP256Key(keyPem: string, what: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (e) {
    throw new Error(`${what}: not a private key (${(e as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error(`${what}: not an ECDSA P-256 key`);
  return key;
}

/** A self-signed CA certificate with its key, checked; throws naming the field. */
function loadCa(certPem: string | undefined, keyPem: string | undefined, certField: string, keyField: string): { pem: CertKeyPem; cert: X509Certificate } {
  if (certPem === undefined) throw new Error(`${certField}: missing`);
  if (keyPem === undefined) throw new Error(`${keyField}: missing`);
  const cert = firstCertificate(certPem, certField);
  if (!cert.ca) throw new Error(`${certField}: not a CA certificate`);
  if (!cert.checkIssued(cert) || !cert.verify(cert.publicKey)) throw new Error(`${certField}: not self-signed`);
  if (!cert.checkPrivateKey(ecP256Key(keyPem, keyField))) throw new Error(`${keyField}: does not match ${certField}`);
  return { pem: { certPem, keyPem }, cert };
}

function firstCertificate(text: string, field: string): X509Certificate {
  try {
    return parseCertificates(text)[0]!;
  } catch (e) {
    throw new Error(`${field}: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// What the Secret holds.

/** Data keys of the Secret (type kubernetes.io/tls: tls.crt and tls.key are the serving pair). */
export const SECRET_KEYS = {
  servingCert: 'tls.crt',
  servingKey: 'tls.key',
  caCert: 'ca.crt',
  caKey: 'ca.key',
  nextCaCert: 'next-ca.crt',
  nextCaKey: 'next-ca.key',
  previousCaCerts: 'previous-ca.crt',
} as const;
/** When the CAs in previous-ca.crt leave the bundle (RFC 3339). */
export const PREVIOUS_CA_RETIRE_ANNOTATION = 'webhook.kdns.io/previous-ca-retire-at';
const FIELD_MANAGER = 'kdns-webhook';

export interface CertState {
  /** Signs the serving certificate. */
  ca: CertKeyPem;
  /** In the bundle ahead of signing anything: step 1 of a CA rotation. */
  nextCa?: CertKeyPem;
  /** CAs whose serving certificates may still be presented, in the bundle until `retireAt`. */
  previousCas?: { certsPem: string; retireAt: number };
  serving: CertKeyPem;
}

/** A state read from the Secret, its certificates parsed. */
export interface LoadedState {
  state: CertState;
  ca: X509Certificate;
  nextCa?: X509Certificate;
  previousCas: X509Certificate[];
  /** Undefined when tls.crt/tls.key cannot be used (then `servingProblem` says why). */
  serving?: X509Certificate;
  servingProblem?: string;
  /** Parts dropped as unreadable (next-ca, previous-ca), for the log. */
  dropped: string[];
}

const decode = (v: string | undefined): string | undefined => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8'));
const encode = (v: string): string => Buffer.from(v, 'utf8').toString('base64');

/**
 * The state in a Secret's data. A CA that cannot be used is an error (everything must be made
 * anew); an unusable next or previous CA is dropped, an unusable serving pair reissued.
 */
export function loadState(data: Record<string, string> | undefined, annotations: Record<string, string> | undefined, dnsNames: readonly string[], now: number): LoadedState {
  const text = (key: string): string | undefined => decode(data?.[key]);
  const ca = loadCa(text(SECRET_KEYS.caCert), text(SECRET_KEYS.caKey), SECRET_KEYS.caCert, SECRET_KEYS.caKey);
  const state: CertState = { ca: ca.pem, serving: { certPem: text(SECRET_KEYS.servingCert) ?? '', keyPem: text(SECRET_KEYS.servingKey) ?? '' } };
  const loaded: LoadedState = { state, ca: ca.cert, previousCas: [], dropped: [] };
  if (text(SECRET_KEYS.nextCaCert) !== undefined || text(SECRET_KEYS.nextCaKey) !== undefined) {
    try {
      const next = loadCa(text(SECRET_KEYS.nextCaCert), text(SECRET_KEYS.nextCaKey), SECRET_KEYS.nextCaCert, SECRET_KEYS.nextCaKey);
      state.nextCa = next.pem;
      loaded.nextCa = next.cert;
    } catch (e) {
      loaded.dropped.push((e as Error).message);
    }
  }
  const previousText = text(SECRET_KEYS.previousCaCerts);
  if (previousText !== undefined) {
    try {
      loaded.previousCas = parseCertificates(previousText);
      // Without a readable retire time, a CA's own expiry bounds every certificate it signed.
      const retireText = annotations?.[PREVIOUS_CA_RETIRE_ANNOTATION];
      const retireAt = retireText !== undefined && !Number.isNaN(Date.parse(retireText)) ? Date.parse(retireText) : Math.max(...loaded.previousCas.map(notAfterOf));
      state.previousCas = { certsPem: loaded.previousCas.map((c) => c.toString()).join(''), retireAt };
    } catch (e) {
      loaded.previousCas = [];
      loaded.dropped.push(`${SECRET_KEYS.previousCaCerts}: ${(e as Error).message}`);
    }
  }
  const problem = servingProblem(state.serving, ca.cert, dnsNames, now);
  if (typeof problem === 'string') loaded.servingProblem = problem;
  else loaded.serving = problem;
  return loaded;
}

/** The serving certificate if it can be presented for `dnsNames` under `ca`, else why not. */
function servingProblem(serving: CertKeyPem, ca: X509Certificate, dnsNames: readonly string[], now: number): X509Certificate | string {
  if (serving.certPem === '') return `${SECRET_KEYS.servingCert}: missing`;
  if (serving.keyPem === '') return `${SECRET_KEYS.servingKey}: missing`;
  try {
    const cert = firstCertificate(serving.certPem, SECRET_KEYS.servingCert);
    if (!cert.checkPrivateKey(ecP256Key(serving.keyPem, SECRET_KEYS.servingKey))) return `${SECRET_KEYS.servingKey}: does not match ${SECRET_KEYS.servingCert}`;
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return `${SECRET_KEYS.servingCert}: not signed by ${SECRET_KEYS.caCert}`;
    const names = new Set(dnsNamesOf(cert));
    const missing = dnsNames.filter((n) => !names.has(n));
    if (missing.length > 0) return `${SECRET_KEYS.servingCert}: does not name ${missing.join(', ')}`;
    if (now >= notAfterOf(cert)) return `${SECRET_KEYS.servingCert}: expired at ${cert.validTo}`;
    return cert;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The CAs the API server must trust in this state: signing, next, previous (in that order). */
export function bundleOf(state: CertState): string {
  return [state.ca.certPem, state.nextCa?.certPem ?? '', state.previousCas?.certsPem ?? ''].join('');
}

function secretData(state: CertState): Record<string, string> {
  const data: Record<string, string> = {
    [SECRET_KEYS.servingCert]: encode(state.serving.certPem),
    [SECRET_KEYS.servingKey]: encode(state.serving.keyPem),
    [SECRET_KEYS.caCert]: encode(state.ca.certPem),
    [SECRET_KEYS.caKey]: encode(state.ca.keyPem),
  };
  if (state.nextCa) {
    data[SECRET_KEYS.nextCaCert] = encode(state.nextCa.certPem);
    data[SECRET_KEYS.nextCaKey] = encode(state.nextCa.keyPem);
  }
  if (state.previousCas) data[SECRET_KEYS.previousCaCerts] = encode(state.previousCas.certsPem);
  return data;
}

// ---------------------------------------------------------------------------------------------
// What to do next: a pure function of the state, the time and what the configuration trusts.

export interface RotationTiming {
  caValidityMs: number;
  certValidityMs: number;
  /** Renew a certificate (serving or CA) once this fraction of its validity has passed. */
  renewAfterFraction: number;
  /** How long the configuration must have trusted a new CA before certificates it signs are served. */
  bundlePropagationMs: number;
}

/** What the last reads of the configuration showed. */
export interface TrustView {
  /** missing: no configuration (or no webhooks in it), so no API server calls the webhook. */
  configuration: 'present' | 'missing' | 'unknown';
  /** Since when each CA (SHA-256 fingerprint) has been in every webhook's caBundle, as seen here. */
  trustedSince: ReadonlyMap<string, number>;
}

export type CertStep =
  | { kind: 'retire-previous-cas'; reason: string }
  | { kind: 'prepare-next-ca'; reason: string }
  | { kind: 'switch-to-next-ca'; reason: string }
  | { kind: 'issue-serving'; reason: string };

const iso = (ms: number): string => new Date(ms).toISOString();

/** Why the next CA may sign now, or undefined while it must wait. */
function switchReason(next: X509Certificate | undefined, justPrepared: boolean, caExpired: boolean, now: number, timing: RotationTiming, view: TrustView): string | undefined {
  if (view.configuration === 'missing') return 'no webhook configuration trusts any CA yet';
  if (caExpired) return 'the signing CA has expired';
  if (justPrepared || !next) return undefined;
  const since = view.trustedSince.get(next.fingerprint256);
  if (since === undefined || now - since < timing.bundlePropagationMs) return undefined;
  return `every webhook has trusted it since ${iso(since)}`;
}

export function planSteps(loaded: LoadedState, now: number, timing: RotationTiming, view: TrustView): CertStep[] {
  const steps: CertStep[] = [];
  const previous = loaded.state.previousCas;
  if (previous && now >= previous.retireAt) steps.push({ kind: 'retire-previous-cas', reason: `the last serving certificate they signed expired at ${iso(previous.retireAt)}` });
  const caRenewal = renewalTime(loaded.ca, timing.renewAfterFraction);
  const caExpired = now >= notAfterOf(loaded.ca);
  const prepare = !loaded.nextCa && now >= caRenewal;
  if (prepare) steps.push({ kind: 'prepare-next-ca', reason: `CA ${commonNameOf(loaded.ca)} was due for renewal at ${iso(caRenewal)}` });
  const switchWhy = prepare || loaded.nextCa ? switchReason(loaded.nextCa, prepare, caExpired, now, timing, view) : undefined;
  if (switchWhy !== undefined) {
    steps.push({ kind: 'switch-to-next-ca', reason: switchWhy });
    return steps; // the switch issues the serving certificate too
  }
  if (!loaded.serving) steps.push({ kind: 'issue-serving', reason: loaded.servingProblem ?? 'no serving certificate' });
  else if (now >= renewalTime(loaded.serving, timing.renewAfterFraction)) {
    steps.push({ kind: 'issue-serving', reason: `serving certificate was due for renewal at ${iso(renewalTime(loaded.serving, timing.renewAfterFraction))}` });
  }
  return steps;
}

const caName = (now: number): string => `kdns-webhook-ca@${Math.floor(now / 1000)}`;

async function servingFor(ca: CertKeyPem, dnsNames: readonly string[], now: number, timing: RotationTiming): Promise<CertKeyPem> {
  return issueServingCert(ca, dnsNames, validityFrom(now, timing.certValidityMs, notAfterOf(new X509Certificate(ca.certPem))));
}

/** A CA and a serving certificate it signed, for a Secret that has none (or none usable). */
export async function freshState(dnsNames: readonly string[], now: number, timing: RotationTiming): Promise<CertState> {
  const ca = await issueCa(caName(now), validityFrom(now, timing.caValidityMs));
  return { ca, serving: await servingFor(ca, dnsNames, now, timing) };
}

/** The state after `steps` (new keys and certificates where they say so). */
export async function applySteps(loaded: LoadedState, steps: readonly CertStep[], dnsNames: readonly string[], now: number, timing: RotationTiming): Promise<CertState> {
  let state: CertState = { ...loaded.state };
  for (const step of steps) {
    if (step.kind === 'retire-previous-cas') {
      const { previousCas: _retired, ...rest } = state;
      state = rest;
    } else if (step.kind === 'prepare-next-ca') {
      state = { ...state, nextCa: await issueCa(caName(now), validityFrom(now, timing.caValidityMs)) };
    } else if (step.kind === 'switch-to-next-ca') {
      const { nextCa, ...rest } = state;
      if (!nextCa) throw new Error('switch-to-next-ca without a next CA');
      // Certificates the old CA signed stay trusted until the last one presented expires (an
      // unreadable one: until the old CA itself does, which bounds them all).
      const lastSigned = loaded.serving ? notAfterOf(loaded.serving) : notAfterOf(loaded.ca);
      const retireAt = Math.max(lastSigned, state.previousCas?.retireAt ?? 0);
      state = { ...rest, ca: nextCa, previousCas: { certsPem: (state.previousCas?.certsPem ?? '') + state.ca.certPem, retireAt }, serving: await servingFor(nextCa, dnsNames, now, timing) };
    } else {
      state = { ...state, serving: await servingFor(state.ca, dnsNames, now, timing) };
    }
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// The configuration's caBundles.

/** Fingerprints of the CAs a caBundle (base64 of PEM) holds; unreadable blocks count as none. */
function bundleFingerprints(caBundle: string | undefined): Set<string> {
  if (!caBundle) return new Set();
  try {
    return new Set(parseCertificates(Buffer.from(caBundle, 'base64').toString('utf8')).map((c) => c.fingerprint256));
  } catch {
    return new Set();
  }
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x));

/** JSON patch setting every webhook's caBundle that differs (as a set of CAs) from `bundlePem`. */
export function caBundlePatch(config: V1MutatingWebhookConfiguration, bundlePem: string): Array<{ op: 'test' | 'add'; path: string; value: string }> {
  const want = new Set(parseCertificates(bundlePem).map((c) => c.fingerprint256));
  const value = encode(bundlePem);
  const ops = (config.webhooks ?? []).flatMap((w, i) => (sameSet(bundleFingerprints(w.clientConfig?.caBundle), want) ? [] : [{ op: 'add' as const, path: `/webhooks/${i}/clientConfig/caBundle`, value }]));
  if (ops.length === 0) return [];
  // The indexes are those of the version read: the patch applies to that version only.
  return [{ op: 'test', path: '/metadata/resourceVersion', value: config.metadata?.resourceVersion ?? '' }, ...ops];
}

/** CAs in every webhook's caBundle. */
function trustedByAll(config: V1MutatingWebhookConfiguration): Set<string> {
  const sets = (config.webhooks ?? []).map((w) => bundleFingerprints(w.clientConfig?.caBundle));
  if (sets.length === 0) return new Set();
  return new Set([...sets[0]!].filter((fp) => sets.every((s) => s.has(fp))));
}

// ---------------------------------------------------------------------------------------------
// The Secret-backed source.

export interface SecretCertSourceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  webhookConfigurationName: string;
  /** Names the serving certificate carries: the Service's, short and long. */
  dnsNames: string[];
  /** Default 10 years. */
  caValidityMs?: number;
  /** Default 1 year (never beyond the signing CA's expiry). */
  certValidityMs?: number;
  /** Renew once this fraction of a certificate's validity has passed; default 2/3. */
  renewAfterFraction?: number;
  /** How often the Secret and the configuration are checked; default 10 s. */
  checkIntervalMs?: number;
  /** How long the configuration must trust a new CA before certificates it signs are served; default 60 s. */
  bundlePropagationMs?: number;
  /** The clock (tests move it). */
  now?: () => number;
  log: (line: string) => void;
}

export interface SecretCertSource extends CertSource {
  /** One check now (after any check under way): the Secret, the rotation, the caBundles. */
  checkNow(): Promise<void>;
}

const YEAR_MS = 365 * 24 * 3600_000;
export const SECRET_SOURCE_DEFAULTS = {
  caValidityMs: 10 * YEAR_MS,
  certValidityMs: YEAR_MS,
  renewAfterFraction: 2 / 3,
  checkIntervalMs: 10_000,
  bundlePropagationMs: 60_000,
} as const;
/** Conflicts in one check before waiting for the next (other replicas writing just as often). */
const MAX_ATTEMPTS = 5;

type ClientModule = typeof import('@kubernetes/client-node');

function checkOptions(o: SecretCertSourceOptions, t: RotationTiming & { checkIntervalMs: number }): void {
  for (const f of ['namespace', 'secretName', 'webhookConfigurationName'] as const) if (o[f] === '') throw new Error(`${f}: empty`);
  if (o.dnsNames.length === 0) throw new Error('dnsNames: at least one name is needed');
  for (const f of ['caValidityMs', 'certValidityMs', 'checkIntervalMs'] as const) if (!(t[f] > 0)) throw new Error(`${f}: must be a positive number of milliseconds (got ${t[f]})`);
  if (!(t.bundlePropagationMs >= 0)) throw new Error(`bundlePropagationMs: must be 0 or more (got ${t.bundlePropagationMs})`);
  if (!(t.renewAfterFraction > 0 && t.renewAfterFraction < 1)) throw new Error(`renewAfterFraction: must be between 0 and 1 (got ${t.renewAfterFraction})`);
}

/** An API error's status code, or undefined for a transport failure. */
function statusOf(client: ClientModule, e: unknown): number | undefined {
  return e instanceof client.ApiException ? e.code : undefined;
}

/** A Status body's message ("secrets \"x\" is forbidden: …"), else the start of the body (a proxy's page). */
function statusMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.slice(0, 200);
    }
  }
  const message = typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(JSON.stringify(parsed)).slice(0, 200);
}

function describe(client: ClientModule, e: unknown): string {
  if (e instanceof client.ApiException) return `HTTP ${e.code}: ${statusMessage(e.body)}`;
  return e instanceof Error ? e.message : String(e);
}

type ConfigRead = { kind: 'present'; config: V1MutatingWebhookConfiguration } | { kind: 'missing' } | { kind: 'failed' };
type Outcome = 'done' | 'conflict';

class SecretSource implements SecretCertSource {
  private material: TlsMaterial | undefined;
  private readonly listeners: Array<(m: TlsMaterial) => void> = [];
  private readonly trustedSince = new Map<string, number>();
  private readonly lastLog = new Map<string, string>();
  /** Failed checks in a row (the retry delay doubles with each). */
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly core: import('@kubernetes/client-node').CoreV1Api;
  private readonly admission: import('@kubernetes/client-node').AdmissionregistrationV1Api;
  private readonly now: () => number;

  constructor(
    private readonly client: ClientModule,
    private readonly o: SecretCertSourceOptions,
    private readonly timing: RotationTiming & { checkIntervalMs: number },
  ) {
    this.core = o.kubeConfig.makeApiClient(client.CoreV1Api);
    this.admission = o.kubeConfig.makeApiClient(client.AdmissionregistrationV1Api);
    this.now = o.now ?? Date.now;
  }

  get ready(): boolean {
    return this.material !== undefined;
  }

  current(): TlsMaterial {
    if (!this.material) throw new Error('no certificate yet');
    return this.material;
  }

  onChange(listener: (m: TlsMaterial) => void): void {
    this.listeners.push(listener);
  }

  async checkNow(): Promise<void> {
    await this.checkLogged();
  }

  /** One check after any under way; true when all of it went through. Failures are logged. */
  private checkLogged(): Promise<boolean> {
    const run = this.queue.then(() => this.check()).then(
      (complete) => {
        if (complete) this.logChange('check', undefined);
        return complete;
      },
      (e: unknown) => {
        this.logChange('check', `webhook certificates: ${describe(this.client, e)}`);
        return false;
      },
    );
    this.queue = run.then(() => undefined);
    return run;
  }

  /** The next check's delay: the interval, or after failures 1 s (at most an eighth of the interval) doubling up to it. */
  private retryDelay(complete: boolean): number {
    const interval = this.timing.checkIntervalMs;
    this.failures = complete ? 0 : this.failures + 1;
    if (complete) return interval;
    return Math.min(interval, Math.min(1000, interval / 8) * 2 ** Math.min(this.failures - 1, 30));
  }

  /** Checks until there is a certificate to serve, retrying failures with backoff. */
  async untilReady(): Promise<void> {
    for (;;) {
      const complete = await this.checkLogged();
      if (this.ready) return;
      await new Promise((r) => setTimeout(r, this.retryDelay(complete)));
    }
  }

  /** Checks every interval from now on, sooner after a failure. */
  schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.checkLogged().then((complete) => this.schedule(this.retryDelay(complete)));
    }, delayMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.queue;
  }

  /** Logs a line for `topic` unless it is the line last logged for it (a problem that persists). */
  private logChange(topic: string, line: string | undefined): void {
    if (line === undefined) {
      this.lastLog.delete(topic);
      return;
    }
    if (this.lastLog.get(topic) === line) return;
    this.lastLog.set(topic, line);
    this.o.log(line);
  }

  private get secretRef(): string {
    return `Secret ${this.o.namespace}/${this.o.secretName}`;
  }

  /**
   * One check: false when part of it could not be done (an unreadable configuration, writers
   * racing this one), throws when the Secret could not be read or written.
   */
  private async check(): Promise<boolean> {
    if (this.closed) return true;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      // The configuration first, then the Secret: see the ordering argument at the top.
      const config = await this.readConfiguration();
      const state = await this.reconcileSecret(config);
      if (state === 'conflict') continue;
      this.adopt(state);
      if (config.kind !== 'present') return config.kind === 'missing';
      if ((await this.patchCaBundles(config.config, bundleOf(state))) === 'done') return true;
    }
    this.o.log(`webhook certificates: other writers changed the ${this.secretRef} or MutatingWebhookConfiguration ${this.o.webhookConfigurationName} ${MAX_ATTEMPTS} times during one check; trying again soon`);
    return false;
  }

  private async readConfiguration(): Promise<ConfigRead> {
    const name = this.o.webhookConfigurationName;
    try {
      const config = await this.admission.readMutatingWebhookConfiguration({ name });
      this.logChange('configuration', undefined);
      this.observe(config);
      return { kind: 'present', config };
    } catch (e) {
      if (statusOf(this.client, e) === 404) {
        this.logChange('configuration', `webhook certificates: MutatingWebhookConfiguration ${name} not found; its caBundle is set once it exists`);
        this.trustedSince.clear();
        return { kind: 'missing' };
      }
      this.logChange('configuration', `webhook certificates: read MutatingWebhookConfiguration ${name}: ${describe(this.client, e)}`);
      return { kind: 'failed' };
    }
  }

  /** Records which CAs every webhook trusts, and since when (as far as this replica has seen). */
  private observe(config: V1MutatingWebhookConfiguration): void {
    const trusted = trustedByAll(config);
    for (const fp of this.trustedSince.keys()) if (!trusted.has(fp)) this.trustedSince.delete(fp);
    for (const fp of trusted) if (!this.trustedSince.has(fp)) this.trustedSince.set(fp, this.now());
  }

  private view(config: ConfigRead): TrustView {
    const noWebhooks = config.kind === 'present' && (config.config.webhooks ?? []).length === 0;
    return { configuration: config.kind === 'missing' || noWebhooks ? 'missing' : config.kind === 'present' ? 'present' : 'unknown', trustedSince: this.trustedSince };
  }

  /** Reads the Secret and brings it up to date; returns the state it holds after. */
  private async reconcileSecret(config: ConfigRead): Promise<CertState | 'conflict'> {
    const { namespace, secretName: name, dnsNames } = this.o;
    const now = this.now();
    let secret: V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ name, namespace });
    } catch (e) {
      if (statusOf(this.client, e) !== 404) throw new Error(`read ${this.secretRef}: ${describe(this.client, e)}`);
      return this.createSecret(await freshState(dnsNames, now, this.timing));
    }
    let loaded: LoadedState;
    try {
      loaded = loadState(secret.data, secret.metadata?.annotations, dnsNames, now);
    } catch (e) {
      this.o.log(`webhook certificates: ${this.secretRef}: ${(e as Error).message}; making a new CA and serving certificate`);
      return this.replaceSecret(secret, await freshState(dnsNames, now, this.timing));
    }
    for (const d of loaded.dropped) this.o.log(`webhook certificates: ${this.secretRef}: ${d}; dropped`);
    // What the Secret holds is what every replica may present: serve it even if writing fails below.
    if (loaded.serving) this.adopt(loaded.state);
    const steps = planSteps(loaded, now, this.timing, this.view(config));
    if (steps.length === 0 && loaded.dropped.length === 0) return loaded.state;
    const next = await applySteps(loaded, steps, dnsNames, now, this.timing);
    const written = await this.replaceSecret(secret, next);
    if (written !== 'conflict') for (const s of steps) this.o.log(`webhook certificates: ${describeStep(s, next)} (${s.reason})`);
    return written;
  }

  private async createSecret(state: CertState): Promise<CertState | 'conflict'> {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: this.o.secretName, namespace: this.o.namespace, labels: { 'app.kubernetes.io/part-of': 'kdns', 'app.kubernetes.io/component': 'webhook' }, annotations: annotationsFor(state, {}) },
      type: 'kubernetes.io/tls',
      data: secretData(state),
    };
    try {
      await this.core.createNamespacedSecret({ namespace: this.o.namespace, body, fieldManager: FIELD_MANAGER });
    } catch (e) {
      // Another replica created it first: adopt theirs on the next attempt.
      if (statusOf(this.client, e) === 409) return 'conflict';
      throw new Error(`create ${this.secretRef}: ${describe(this.client, e)}`);
    }
    this.o.log(`webhook certificates: created ${this.secretRef} with CA ${commonNameOf(new X509Certificate(state.ca.certPem))}`);
    return state;
  }

  private async replaceSecret(read: V1Secret, state: CertState): Promise<CertState | 'conflict'> {
    const ours = new Set<string>(Object.values(SECRET_KEYS));
    const kept = Object.fromEntries(Object.entries(read.data ?? {}).filter(([k]) => !ours.has(k)));
    // The resourceVersion read makes this a compare-and-swap: a replica that wrote in between wins.
    const body: V1Secret = { ...read, metadata: { ...read.metadata, annotations: annotationsFor(state, read.metadata?.annotations ?? {}) }, data: { ...kept, ...secretData(state) } };
    try {
      await this.core.replaceNamespacedSecret({ name: this.o.secretName, namespace: this.o.namespace, body, fieldManager: FIELD_MANAGER });
    } catch (e) {
      // 409: another replica wrote first; 404: it was deleted in between (create on the next attempt).
      const status = statusOf(this.client, e);
      if (status === 409 || status === 404) return 'conflict';
      throw new Error(`update ${this.secretRef}: ${describe(this.client, e)}`);
    }
    return state;
  }

  private async patchCaBundles(config: V1MutatingWebhookConfiguration, bundlePem: string): Promise<Outcome> {
    const ops = caBundlePatch(config, bundlePem);
    if (ops.length === 0) return 'done';
    const name = this.o.webhookConfigurationName;
    try {
      const patched = await this.admission.patchMutatingWebhookConfiguration({ name, body: ops, fieldManager: FIELD_MANAGER });
      this.observe(patched);
    } catch (e) {
      // The test of the resourceVersion failed (someone wrote the configuration since it was
      // read; API servers answer 409 or 422), or it was deleted: read both again.
      const status = statusOf(this.client, e);
      if (status === 409 || status === 422 || status === 404) return 'conflict';
      throw new Error(`patch MutatingWebhookConfiguration ${name}: ${describe(this.client, e)}`);
    }
    const webhooks = ops.flatMap((op) => (op.op === 'add' ? [config.webhooks?.[Number(op.path.split('/')[2])]?.name ?? '?'] : []));
    const cas = parseCertificates(bundlePem).map(commonNameOf).join(', ');
    this.o.log(`webhook certificates: caBundle of ${webhooks.join(', ')} in MutatingWebhookConfiguration ${name} set to ${cas}`);
    return 'done';
  }

  /** Serves `state` from now on, telling the listeners when anything they hand to TLS changed. */
  private adopt(state: CertState): void {
    const next: TlsMaterial = { certPem: state.serving.certPem, keyPem: state.serving.keyPem, caBundlePem: bundleOf(state), notAfter: new Date(notAfterOf(new X509Certificate(state.serving.certPem))) };
    const had = this.material;
    if (had && had.certPem === next.certPem && had.keyPem === next.keyPem && had.caBundlePem === next.caBundlePem) return;
    this.material = next;
    if (!had) return;
    for (const l of this.listeners) {
      try {
        l(next);
      } catch (e) {
        this.o.log(`webhook certificates: a listener failed on the new certificate: ${(e as Error).message}`);
      }
    }
  }
}

function annotationsFor(state: CertState, existing: Record<string, string>): Record<string, string> {
  const { [PREVIOUS_CA_RETIRE_ANNOTATION]: _old, ...rest } = existing;
  return state.previousCas ? { ...rest, [PREVIOUS_CA_RETIRE_ANNOTATION]: iso(state.previousCas.retireAt) } : rest;
}

function describeStep(step: CertStep, after: CertState): string {
  const cn = (pemText: string): string => commonNameOf(new X509Certificate(pemText));
  switch (step.kind) {
    case 'retire-previous-cas':
      return 'retired the previous CA from the bundle';
    case 'prepare-next-ca':
      return `added CA ${after.nextCa ? cn(after.nextCa.certPem) : '?'} to the bundle ahead of signing with it`;
    case 'switch-to-next-ca':
      return `serving certificates are now signed by CA ${cn(after.ca.certPem)}`;
    case 'issue-serving':
      return `issued a serving certificate valid until ${new X509Certificate(after.serving.certPem).validTo}`;
  }
}

/**
 * Starts the Secret-backed source: resolves once a serving certificate is at hand (retrying the
 * API with backoff until then), then checks every `checkIntervalMs`.
 */
export async function startSecretCertSource(o: SecretCertSourceOptions): Promise<SecretCertSource> {
  const timing = {
    caValidityMs: o.caValidityMs ?? SECRET_SOURCE_DEFAULTS.caValidityMs,
    certValidityMs: o.certValidityMs ?? SECRET_SOURCE_DEFAULTS.certValidityMs,
    renewAfterFraction: o.renewAfterFraction ?? SECRET_SOURCE_DEFAULTS.renewAfterFraction,
    checkIntervalMs: o.checkIntervalMs ?? SECRET_SOURCE_DEFAULTS.checkIntervalMs,
    bundlePropagationMs: o.bundlePropagationMs ?? SECRET_SOURCE_DEFAULTS.bundlePropagationMs,
  };
  checkOptions(o, timing);
  const client = await import('@kubernetes/client-node');
  const source = new SecretSource(client, o, timing);
  await source.untilReady();
  source.schedule(timing.checkIntervalMs);
  return source;
}
