// The certificates kdns issues for its webhook, read back with Node's X509Certificate (what
// OpenSSL sees) and used in real TLS handshakes: an HTTPS server presenting the serving
// certificate, a client trusting only the CA bundle, as kube-apiserver calls the webhook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { issueCa, issueServingCert, validityFrom } from './certs.js';
import type { CertKeyPem } from './certs.js';
import { tlsHandshake } from '../../test/util/certs.js';

const DNS_NAMES = ['kdns-webhook', 'kdns-webhook.kdns', 'kdns-webhook.kdns.svc', 'kdns-webhook.kdns.svc.cluster.local'];
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0, 500);
const HOUR = 3600_000;

test('validityFrom: whole seconds, backdated a tenth of the lifetime up to 5 minutes, never past endBy', () => {
  const cases: Array<{ name: string; lifetimeMs: number; endBy?: number; notBefore: string; notAfter: string }> = [
    { name: '30 s: backdated 3 s', lifetimeMs: 30_000, notBefore: '2030-01-01T11:59:57.000Z', notAfter: '2030-01-01T12:00:30.000Z' },
    { name: '1 h: backdated 5 min (the cap)', lifetimeMs: HOUR, notBefore: '2030-01-01T11:55:00.000Z', notAfter: '2030-01-01T13:00:00.000Z' },
    { name: 'ends with the CA', lifetimeMs: HOUR, endBy: T0 + 600_000, notBefore: '2030-01-01T11:55:00.000Z', notAfter: '2030-01-01T12:10:00.000Z' },
  ];
  for (const c of cases) {
    const v = validityFrom(T0, c.lifetimeMs, c.endBy);
    assert.deepEqual({ notBefore: v.notBefore.toISOString(), notAfter: v.notAfter.toISOString() }, { notBefore: c.notBefore, notAfter: c.notAfter }, c.name);
  }
});

test('the CA and the serving certificate carry what kube-apiserver checks', async () => {
  const ca = await issueCa('kdns-webhook-ca@1893499200', validityFrom(T0, 10 * HOUR));
  const serving = await issueServingCert(ca, DNS_NAMES, validityFrom(T0, HOUR, T0 + 10 * HOUR));
  const caCert = new X509Certificate(ca.certPem);
  const leaf = new X509Certificate(serving.certPem);
  const other = new X509Certificate((await issueCa('kdns-webhook-ca@1893499200', validityFrom(T0, HOUR))).certPem);
  const cases: Array<{ name: string; got: unknown; want: unknown }> = [
    { name: 'CA subject', got: caCert.subject, want: 'CN=kdns-webhook-ca@1893499200' },
    { name: 'CA is a CA', got: caCert.ca, want: true },
    { name: 'CA is self-signed', got: caCert.checkIssued(caCert) && caCert.verify(caCert.publicKey), want: true },
    { name: 'CA key matches', got: caCert.checkPrivateKey((await import('node:crypto')).createPrivateKey(ca.keyPem)), want: true },
    { name: 'CA validity', got: [caCert.validFrom, caCert.validTo], want: ['Jan  1 11:55:00 2030 GMT', 'Jan  1 22:00:00 2030 GMT'] },
    { name: 'serving subject', got: leaf.subject, want: 'CN=kdns-webhook' },
    { name: 'serving issuer', got: leaf.issuer, want: 'CN=kdns-webhook-ca@1893499200' },
    { name: 'serving names', got: leaf.subjectAltName, want: 'DNS:kdns-webhook, DNS:kdns-webhook.kdns, DNS:kdns-webhook.kdns.svc, DNS:kdns-webhook.kdns.svc.cluster.local' },
    { name: 'serving is no CA', got: leaf.ca, want: false },
    { name: 'serving is for TLS servers', got: leaf.keyUsage, want: ['1.3.6.1.5.5.7.3.1'] },
    { name: 'serving issued by the CA', got: leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey), want: true },
    { name: 'serving not by another CA of the same name', got: leaf.verify(other.publicKey), want: false },
    { name: 'serving key matches', got: leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(serving.keyPem)), want: true },
    { name: 'serving validity', got: [leaf.validFrom, leaf.validTo], want: ['Jan  1 11:55:00 2030 GMT', 'Jan  1 13:00:00 2030 GMT'] },
    { name: 'key is ECDSA P-256', got: leaf.publicKey.asymmetricKeyDetails?.namedCurve, want: 'prime256v1' },
  ];
  for (const c of cases) assert.deepEqual(c.got, c.want, c.name);
});

test('two certificates never share a serial number', async () => {
  const ca = await issueCa('kdns-webhook-ca@1', validityFrom(T0, HOUR));
  const serials = new Set<string>();
  for (let i = 0; i < 5; i++) serials.add(new X509Certificate((await issueServingCert(ca, DNS_NAMES, validityFrom(T0, HOUR))).certPem).serialNumber);
  assert.equal(serials.size, 5);
});

const handshake = tlsHandshake;

test('TLS: a client trusting only the bundle accepts the serving certificate for each Service name, and nothing else', async () => {
  const now = Date.now();
  const ca = await issueCa(`kdns-webhook-ca@${Math.floor(now / 1000)}`, validityFrom(now, HOUR));
  const otherCa = await issueCa(`kdns-webhook-ca@${Math.floor(now / 1000)}`, validityFrom(now, HOUR));
  const serving = await issueServingCert(ca, DNS_NAMES, validityFrom(now, HOUR));
  const expired = await issueServingCert(ca, DNS_NAMES, { notBefore: new Date(now - 2 * HOUR), notAfter: new Date(now - HOUR) });
  const cases: Array<{ name: string; serving: CertKeyPem; bundle: string; servername: string; want: string }> = [
    ...DNS_NAMES.map((n) => ({ name: `name ${n}`, serving, bundle: ca.certPem, servername: n, want: 'ok' })),
    { name: 'the bundle holds the signing CA among others', serving, bundle: otherCa.certPem + ca.certPem, servername: 'kdns-webhook.kdns.svc', want: 'ok' },
    { name: 'a name the certificate lacks', serving, bundle: ca.certPem, servername: 'kdns-webhook.other.svc', want: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    { name: 'a bundle without the signing CA', serving, bundle: otherCa.certPem, servername: 'kdns-webhook.kdns.svc', want: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
    { name: 'an expired serving certificate', serving: expired, bundle: ca.certPem, servername: 'kdns-webhook.kdns.svc', want: 'CERT_HAS_EXPIRED' },
  ];
  for (const c of cases) assert.equal(await handshake(c.serving, c.bundle, c.servername), c.want, c.name);
});
