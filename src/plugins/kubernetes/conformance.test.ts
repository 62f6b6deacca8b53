// Conformance of the kubernetes plugin: real `dig` against a real kdns server reading the fixture
// cluster in testdata/cluster. One server, one block per option set (each its own zone), so every
// row is one query and its whole expected reply: rcode, flags and every section.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { dig, type DigRecord, type DigResult } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = join(ROOT, 'src/plugins/kubernetes/testdata/cluster');

const block = (zone: string, options: string): string => `
${zone}:{PORT} {
    bind 127.0.0.1
    kubernetes {
        manifests ${FIXTURE}
        ${options}
    }
    whoami
}`;

const COREFILE = `
cluster.local:{PORT} in-addr.arpa:{PORT} ip6.arpa:{PORT} {
    bind 127.0.0.1
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests ${FIXTURE}
        pods insecure
        fallthrough ip6.arpa
    }
    whoami
}
${block('verified.test', 'pods verified\n        endpoint_pod_names\n        ttl 30')}
${block('ns.test', 'namespaces demo')}
${block('labels.test', 'labels app=web')}
${block('nslabels.test', 'namespace_labels env=prod')}
${block('ignore.test', 'ignore empty_service')}
${block('noep.test', 'noendpoints')}
${block('fall.test', 'fallthrough')}
`;

interface Case {
  name: string;
  type: string;
  rcode: string;
  answer?: string[];
  authority?: string[];
  additional?: string[];
  /** Header flags dig shows (queries go with +norec). */
  flags?: string;
}

/** The SOA of negative answers: TTL min(ttl, 300), minimum = ttl, serial varies. */
const soa = (zone: string, ttl = 5): string => `${zone} ${Math.min(ttl, 300)} SOA ns.dns.${zone} hostmaster.${zone} SERIAL 7200 1800 86400 ${ttl}`;
const CL = 'cluster.local.';
const nodata = (zone = CL, ttl = 5): Pick<Case, 'rcode' | 'authority'> => ({ rcode: 'NOERROR', authority: [soa(zone, ttl)] });
const nx = (zone = CL, ttl = 5): Pick<Case, 'rcode' | 'authority'> => ({ rcode: 'NXDOMAIN', authority: [soa(zone, ttl)] });
const ok = (...answer: string[]): Pick<Case, 'rcode' | 'answer'> => ({ rcode: 'NOERROR', answer });

const cases: Case[] = [
  // ---- ClusterIP services: A/AAAA, dual-stack, case kept ----
  { name: 'kubernetes.default.svc.cluster.local', type: 'A', ...ok('kubernetes.default.svc.cluster.local. 5 A 10.96.0.1') },
  { name: 'web.demo.svc.cluster.local', type: 'A', ...ok('web.demo.svc.cluster.local. 5 A 10.96.1.10') },
  { name: 'WEB.Demo.SVC.Cluster.Local', type: 'A', ...ok('WEB.Demo.SVC.Cluster.Local. 5 A 10.96.1.10') },
  { name: 'web.demo.svc.cluster.local', type: 'AAAA', ...nodata() },
  { name: 'Web.Demo.svc.CLUSTER.local', type: 'AAAA', ...nodata('CLUSTER.local.') },
  { name: 'dual.demo.svc.cluster.local', type: 'A', ...ok('dual.demo.svc.cluster.local. 5 A 10.96.1.20') },
  { name: 'dual.demo.svc.cluster.local', type: 'AAAA', ...ok('dual.demo.svc.cluster.local. 5 AAAA fd00:10:96::20') },
  { name: 'v6only.demo.svc.cluster.local', type: 'AAAA', ...ok('v6only.demo.svc.cluster.local. 5 AAAA fd00:10:96::40') },
  { name: 'v6only.demo.svc.cluster.local', type: 'A', ...nodata() },
  { name: 'empty.demo.svc.cluster.local', type: 'A', ...ok('empty.demo.svc.cluster.local. 5 A 10.96.1.30') },
  { name: 'thing.implied.svc.cluster.local', type: 'A', ...ok('thing.implied.svc.cluster.local. 5 A 10.96.3.1') },
  { name: 'nope.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'web.nonexistent.svc.cluster.local', type: 'A', ...nx() },

  // ---- headless services: ready endpoints only, hostnames, legacy Endpoints, IPv6 ----
  { name: 'db.demo.svc.cluster.local', type: 'A', ...ok('db.demo.svc.cluster.local. 5 A 10.244.2.10', 'db.demo.svc.cluster.local. 5 A 10.244.2.11') },
  { name: 'db.demo.svc.cluster.local', type: 'AAAA', ...nodata() },
  { name: 'db-0.db.demo.svc.cluster.local', type: 'A', ...ok('db-0.db.demo.svc.cluster.local. 5 A 10.244.2.10') },
  { name: 'db-2.db.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'headless-empty.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'headless-empty.demo.svc.cluster.local', type: 'AAAA', ...nx() },
  { name: 'pnr.demo.svc.cluster.local', type: 'A', ...ok('pnr.demo.svc.cluster.local. 5 A 10.244.4.1') },
  { name: 'pnr-0.pnr.demo.svc.cluster.local', type: 'A', ...ok('pnr-0.pnr.demo.svc.cluster.local. 5 A 10.244.4.1') },
  { name: 'legacy.demo.svc.cluster.local', type: 'A', ...ok('legacy.demo.svc.cluster.local. 5 A 10.244.3.1') },
  { name: 'legacy-a.legacy.demo.svc.cluster.local', type: 'A', ...ok('legacy-a.legacy.demo.svc.cluster.local. 5 A 10.244.3.1') },
  { name: 'legacy-b.legacy.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'noports.demo.svc.cluster.local', type: 'A', ...ok('noports.demo.svc.cluster.local. 5 A 10.244.5.1') },
  { name: 'headless6.demo.svc.cluster.local', type: 'AAAA', ...ok('headless6.demo.svc.cluster.local. 5 AAAA fd00:10:244::5') },
  { name: 'headless6.demo.svc.cluster.local', type: 'A', ...nodata() },
  { name: 'fd00-10-244--5.headless6.demo.svc.cluster.local', type: 'AAAA', ...ok('fd00-10-244--5.headless6.demo.svc.cluster.local. 5 AAAA fd00:10:244::5') },
  { name: '10-244-1-11.web.demo.svc.cluster.local', type: 'A', ...ok('10-244-1-11.web.demo.svc.cluster.local. 5 A 10.244.1.11') },
  { name: '10-244-1-13.web.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'web-7d9f-abc.web.demo.svc.cluster.local', type: 'A', ...nx() },

  // ---- SRV: ClusterIP targets with glue, headless per-endpoint targets, weights ----
  {
    name: '_http._tcp.web.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_http._tcp.web.demo.svc.cluster.local. 5 SRV 0 100 80 web.demo.svc.cluster.local.'),
    additional: ['web.demo.svc.cluster.local. 5 A 10.96.1.10'],
  },
  {
    name: '_HTTPS._TCP.web.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_HTTPS._TCP.web.demo.svc.cluster.local. 5 SRV 0 100 443 web.demo.svc.cluster.local.'),
    additional: ['web.demo.svc.cluster.local. 5 A 10.96.1.10'],
  },
  { name: '_http._udp.web.demo.svc.cluster.local', type: 'SRV', ...nx() },
  { name: '_ftp._tcp.web.demo.svc.cluster.local', type: 'SRV', ...nx() },
  {
    name: 'web.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('web.demo.svc.cluster.local. 5 SRV 0 50 443 web.demo.svc.cluster.local.', 'web.demo.svc.cluster.local. 5 SRV 0 50 80 web.demo.svc.cluster.local.'),
    additional: ['web.demo.svc.cluster.local. 5 A 10.96.1.10'],
  },
  {
    name: '_postgres._tcp.db.demo.svc.cluster.local',
    type: 'SRV',
    ...ok(
      '_postgres._tcp.db.demo.svc.cluster.local. 5 SRV 0 50 5432 db-0.db.demo.svc.cluster.local.',
      '_postgres._tcp.db.demo.svc.cluster.local. 5 SRV 0 50 5432 db-1.db.demo.svc.cluster.local.',
    ),
    additional: ['db-0.db.demo.svc.cluster.local. 5 A 10.244.2.10', 'db-1.db.demo.svc.cluster.local. 5 A 10.244.2.11'],
  },
  {
    name: '_http._tcp.dual.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_http._tcp.dual.demo.svc.cluster.local. 5 SRV 0 50 8080 dual.demo.svc.cluster.local.'),
    additional: ['dual.demo.svc.cluster.local. 5 A 10.96.1.20', 'dual.demo.svc.cluster.local. 5 AAAA fd00:10:96::20'],
  },
  {
    name: '_dns._udp.kube-dns.kube-system.svc.cluster.local',
    type: 'SRV',
    ...ok('_dns._udp.kube-dns.kube-system.svc.cluster.local. 5 SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.'),
    additional: ['kube-dns.kube-system.svc.cluster.local. 5 A 10.96.0.10'],
  },
  {
    name: '_dns._udp.udp-svc.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_dns._udp.udp-svc.demo.svc.cluster.local. 5 SRV 0 100 53 udp-svc.demo.svc.cluster.local.'),
    additional: ['udp-svc.demo.svc.cluster.local. 5 A 10.96.1.50'],
  },
  {
    name: '_tcp._tcp.legacy.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_tcp._tcp.legacy.demo.svc.cluster.local. 5 SRV 0 100 9000 legacy-a.legacy.demo.svc.cluster.local.'),
    additional: ['legacy-a.legacy.demo.svc.cluster.local. 5 A 10.244.3.1'],
  },
  {
    name: 'db-0.db.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('db-0.db.demo.svc.cluster.local. 5 SRV 0 100 5432 db-0.db.demo.svc.cluster.local.'),
    additional: ['db-0.db.demo.svc.cluster.local. 5 A 10.244.2.10'],
  },
  {
    name: '_http._tcp.headless6.demo.svc.cluster.local',
    type: 'SRV',
    ...ok('_http._tcp.headless6.demo.svc.cluster.local. 5 SRV 0 100 80 fd00-10-244--5.headless6.demo.svc.cluster.local.'),
    additional: ['fd00-10-244--5.headless6.demo.svc.cluster.local. 5 AAAA fd00:10:244::5'],
  },
  // The question's spelling of the zone in names built in it (targets and their glue), the
  // cluster's own for the rest, as CoreDNS answers; asked after the lower-case rows above.
  {
    name: '_PoStGrEs._TcP.DB.Demo.svc.cLuStEr.LoCaL',
    type: 'SRV',
    ...ok(
      '_PoStGrEs._TcP.DB.Demo.svc.cLuStEr.LoCaL. 5 SRV 0 50 5432 db-0.db.demo.svc.cLuStEr.LoCaL.',
      '_PoStGrEs._TcP.DB.Demo.svc.cLuStEr.LoCaL. 5 SRV 0 50 5432 db-1.db.demo.svc.cLuStEr.LoCaL.',
    ),
    additional: ['db-0.db.demo.svc.cLuStEr.LoCaL. 5 A 10.244.2.10', 'db-1.db.demo.svc.cLuStEr.LoCaL. 5 A 10.244.2.11'],
  },
  {
    name: '_HTTP._tcp.WEB.demo.svc.CLUSTER.LOCAL',
    type: 'SRV',
    ...ok('_HTTP._tcp.WEB.demo.svc.CLUSTER.LOCAL. 5 SRV 0 100 80 web.demo.svc.CLUSTER.LOCAL.'),
    additional: ['web.demo.svc.CLUSTER.LOCAL. 5 A 10.96.1.10'],
  },
  { name: 'noports.demo.svc.cluster.local', type: 'SRV', ...nodata() },
  { name: '_x._tcp.noports.demo.svc.cluster.local', type: 'SRV', ...nx() },
  { name: 'ext.demo.svc.cluster.local', type: 'SRV', ...nodata() },
  { name: '_http._tcp.ext.demo.svc.cluster.local', type: 'SRV', ...nx() },
  { name: 'demo.svc.cluster.local', type: 'SRV', ...nodata() },

  // ---- ExternalName: CNAME, chased in zone; out of zone the next plugin (whoami) has no answer ----
  { name: 'ext.demo.svc.cluster.local', type: 'A', ...ok('ext.demo.svc.cluster.local. 5 CNAME www.example.com.') },
  { name: 'ext.demo.svc.cluster.local', type: 'CNAME', ...ok('ext.demo.svc.cluster.local. 5 CNAME www.example.com.') },
  { name: 'ext.demo.svc.cluster.local', type: 'TXT', ...nodata() },
  {
    name: 'ext-internal.demo.svc.cluster.local',
    type: 'A',
    ...ok('ext-internal.demo.svc.cluster.local. 5 CNAME web.demo.svc.cluster.local.', 'web.demo.svc.cluster.local. 5 A 10.96.1.10'),
  },
  { name: 'ext-internal.demo.svc.cluster.local', type: 'AAAA', ...nodata() },
  {
    name: 'EXT-INTERNAL.Demo.SVC.Cluster.Local',
    type: 'A',
    ...ok('EXT-INTERNAL.Demo.SVC.Cluster.Local. 5 CNAME web.demo.svc.cluster.local.', 'web.demo.svc.cluster.local. 5 A 10.96.1.10'),
  },
  { name: 'ext-ip.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'ext-loop.demo.svc.cluster.local', type: 'A', ...nodata() },
  { name: 'sub.ext.demo.svc.cluster.local', type: 'A', ...nx() },

  // ---- PTR: ClusterIPs and endpoint IPs, IPv4 and IPv6 ----
  { name: '10.1.96.10.in-addr.arpa', type: 'PTR', ...ok('10.1.96.10.in-addr.arpa. 5 PTR web.demo.svc.cluster.local.') },
  { name: '1.0.96.10.in-addr.arpa', type: 'PTR', ...ok('1.0.96.10.in-addr.arpa. 5 PTR kubernetes.default.svc.cluster.local.') },
  { name: '10.2.244.10.in-addr.arpa', type: 'PTR', ...ok('10.2.244.10.in-addr.arpa. 5 PTR db-0.db.demo.svc.cluster.local.') },
  { name: '11.1.244.10.in-addr.arpa', type: 'PTR', ...ok('11.1.244.10.in-addr.arpa. 5 PTR 10-244-1-11.web.demo.svc.cluster.local.') },
  {
    name: '0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa',
    type: 'PTR',
    ...ok('0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa. 5 PTR dual.demo.svc.cluster.local.'),
  },
  {
    name: '5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.4.4.2.0.0.1.0.0.0.0.d.f.ip6.arpa',
    type: 'PTR',
    ...ok('5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.4.4.2.0.0.1.0.0.0.0.d.f.ip6.arpa. 5 PTR fd00-10-244--5.headless6.demo.svc.cluster.local.'),
  },
  { name: '99.99.99.10.in-addr.arpa', type: 'PTR', ...nx('in-addr.arpa.') },
  { name: '12.2.244.10.in-addr.arpa', type: 'PTR', ...nx('in-addr.arpa.') },
  { name: '10.in-addr.arpa', type: 'PTR', ...nx('in-addr.arpa.') },
  { name: 'in-addr.arpa', type: 'SOA', ...ok(soa('in-addr.arpa.')) },
  {
    // ip6.arpa falls through: whoami (next in the chain) answers.
    name: 'd.a.e.d.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa',
    type: 'PTR',
    rcode: 'NOERROR',
    additional: [
      'd.a.e.d.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 0 A 127.0.0.1',
      '_udp.d.a.e.d.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 0 SRV 0 0 PORT .',
    ],
  },

  // ---- the zone's structure: apex, svc/pod, namespaces, malformed names ----
  { name: 'cluster.local', type: 'A', ...nodata() },
  { name: 'cluster.local', type: 'SOA', ...ok(soa(CL)) },
  { name: 'cluster.local', type: 'NS', ...ok('cluster.local. 5 NS ns.dns.cluster.local.'), additional: ['ns.dns.cluster.local. 5 A 127.0.0.1'] },
  { name: 'Cluster.LOCAL', type: 'SOA', ...ok(soa('Cluster.LOCAL.')) },
  { name: 'Cluster.LOCAL', type: 'NS', ...ok('Cluster.LOCAL. 5 NS ns.dns.Cluster.LOCAL.'), additional: ['ns.dns.Cluster.LOCAL. 5 A 127.0.0.1'] },
  { name: 'ns.dns.cluster.local', type: 'A', ...ok('ns.dns.cluster.local. 5 A 127.0.0.1') },
  { name: 'cluster.local', type: 'TXT', ...nx() },
  { name: 'svc.cluster.local', type: 'A', ...nodata() },
  { name: 'pod.cluster.local', type: 'A', ...nodata() },
  { name: 'demo.svc.cluster.local', type: 'A', ...nodata() },
  { name: 'quiet.svc.cluster.local', type: 'A', ...nodata() },
  { name: 'nonexistent.svc.cluster.local', type: 'A', ...nx() },
  { name: 'foo.cluster.local', type: 'A', ...nx() },
  { name: 'a.b.web.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'a.b.c.web.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'web.demo.svc.cluster.local.demo.svc.cluster.local', type: 'A', ...nx() },
  { name: 'web.demo.svc.cluster.local', type: 'MX', ...nodata() },
  { name: 'nope.demo.svc.cluster.local', type: 'MX', ...nx() },
  { name: 'web.demo.svc.cluster.local', type: 'TXT', ...nodata() },
  { name: 'demo.svc.cluster.local', type: 'TXT', ...nx() },
  { name: 'dns-version.cluster.local', type: 'TXT', ...ok('dns-version.cluster.local. 28800 TXT "1.1.0"') },
  { name: 'dns-version.cluster.local', type: 'A', ...nx() },
  { name: 'web.demo.svc.cluster.local', type: 'CNAME', ...nodata() },
  { name: 'web.demo.svc.cluster.local', type: 'SOA', ...nodata() },
  { name: 'nope.demo.svc.cluster.local', type: 'SOA', ...nodata() },
  { name: 'web.demo.svc.cluster.local', type: 'HINFO', ...nodata() },
  { name: 'web.demo.svc.cluster.local', type: 'PTR', ...nodata() },

  // ---- pods insecure: any IP-shaped name in an existing namespace ----
  { name: '10-244-1-11.demo.pod.cluster.local', type: 'A', ...ok('10-244-1-11.demo.pod.cluster.local. 5 A 10.244.1.11') },
  { name: '1-2-3-4.demo.pod.cluster.local', type: 'A', ...ok('1-2-3-4.demo.pod.cluster.local. 5 A 1.2.3.4') },
  { name: '1-2-3-4.quiet.pod.cluster.local', type: 'A', ...ok('1-2-3-4.quiet.pod.cluster.local. 5 A 1.2.3.4') },
  { name: 'fd00-10-244--7.demo.pod.cluster.local', type: 'AAAA', ...ok('fd00-10-244--7.demo.pod.cluster.local. 5 AAAA fd00:10:244::7') },
  { name: 'fd00-10-244--7.demo.pod.cluster.local', type: 'A', ...nodata() },
  { name: '1-2-3-4.nonexistent.pod.cluster.local', type: 'A', ...nx() },
  { name: 'not-an-ip.demo.pod.cluster.local', type: 'A', ...nx() },
  { name: 'demo.pod.cluster.local', type: 'A', ...nodata() },

  // ---- pods verified, endpoint_pod_names, ttl 30 ----
  { name: '10-244-1-11.demo.pod.verified.test', type: 'A', ...ok('10-244-1-11.demo.pod.verified.test. 30 A 10.244.1.11') },
  { name: '1-2-3-4.demo.pod.verified.test', type: 'A', ...nx('verified.test.', 30) },
  { name: '10-244-1-11.other.pod.verified.test', type: 'A', ...nx('verified.test.', 30) },
  { name: '10-244-9-9.demo.pod.verified.test', type: 'A', ...nx('verified.test.', 30) },
  { name: '10-244-9-8.demo.pod.verified.test', type: 'A', ...nx('verified.test.', 30) },
  { name: 'fd00-10-244--7.demo.pod.verified.test', type: 'AAAA', ...ok('fd00-10-244--7.demo.pod.verified.test. 30 AAAA fd00:10:244::7') },
  { name: 'web-7d9f-abc.web.demo.svc.verified.test', type: 'A', ...ok('web-7d9f-abc.web.demo.svc.verified.test. 30 A 10.244.1.11') },
  { name: '10-244-1-11.web.demo.svc.verified.test', type: 'A', ...nx('verified.test.', 30) },
  {
    name: '_http._tcp.web.demo.svc.verified.test',
    type: 'SRV',
    ...ok('_http._tcp.web.demo.svc.verified.test. 30 SRV 0 100 80 web.demo.svc.verified.test.'),
    additional: ['web.demo.svc.verified.test. 30 A 10.96.1.10'],
  },
  { name: 'nope.demo.svc.verified.test', type: 'A', ...nx('verified.test.', 30) },

  // ---- namespaces demo ----
  { name: 'web.demo.svc.ns.test', type: 'A', ...ok('web.demo.svc.ns.test. 5 A 10.96.1.10') },
  { name: 'api.other.svc.ns.test', type: 'A', ...nx('ns.test.') },
  { name: 'other.svc.ns.test', type: 'A', ...nx('ns.test.') },
  { name: 'demo.svc.ns.test', type: 'A', ...nodata('ns.test.') },

  // ---- labels app=web: services and endpoint slices without it are invisible ----
  { name: 'web.demo.svc.labels.test', type: 'A', ...ok('web.demo.svc.labels.test. 5 A 10.96.1.10') },
  { name: '10-244-1-11.web.demo.svc.labels.test', type: 'A', ...ok('10-244-1-11.web.demo.svc.labels.test. 5 A 10.244.1.11') },
  { name: 'db.demo.svc.labels.test', type: 'A', ...nx('labels.test.') },
  { name: 'kubernetes.default.svc.labels.test', type: 'A', ...nx('labels.test.') },

  // ---- namespace_labels env=prod ----
  { name: 'api.other.svc.nslabels.test', type: 'A', ...ok('api.other.svc.nslabels.test. 5 A 10.96.2.10') },
  { name: 'web.demo.svc.nslabels.test', type: 'A', ...nx('nslabels.test.') },
  { name: 'thing.implied.svc.nslabels.test', type: 'A', ...nx('nslabels.test.') },
  { name: 'quiet.svc.nslabels.test', type: 'A', ...nx('nslabels.test.') },

  // ---- ignore empty_service: ClusterIP services without ready endpoints are NXDOMAIN ----
  { name: 'empty.demo.svc.ignore.test', type: 'A', ...nx('ignore.test.') },
  { name: 'dual.demo.svc.ignore.test', type: 'A', ...nx('ignore.test.') },
  { name: 'web.demo.svc.ignore.test', type: 'A', ...ok('web.demo.svc.ignore.test. 5 A 10.96.1.10') },
  { name: 'db.demo.svc.ignore.test', type: 'A', ...ok('db.demo.svc.ignore.test. 5 A 10.244.2.10', 'db.demo.svc.ignore.test. 5 A 10.244.2.11') },
  { name: 'ext.demo.svc.ignore.test', type: 'CNAME', ...ok('ext.demo.svc.ignore.test. 5 CNAME www.example.com.') },

  // ---- noendpoints: no headless answers, no endpoint names; pods disabled by default ----
  { name: 'web.demo.svc.noep.test', type: 'A', ...ok('web.demo.svc.noep.test. 5 A 10.96.1.10') },
  { name: 'db.demo.svc.noep.test', type: 'A', ...nx('noep.test.') },
  { name: 'db-0.db.demo.svc.noep.test', type: 'A', ...nx('noep.test.') },
  { name: '10-244-1-11.demo.pod.noep.test', type: 'A', ...nx('noep.test.') },

  // ---- fallthrough: name errors go on to whoami; NODATA does not ----
  {
    name: 'nope.demo.svc.fall.test',
    type: 'A',
    rcode: 'NOERROR',
    additional: ['nope.demo.svc.fall.test. 0 A 127.0.0.1', '_udp.nope.demo.svc.fall.test. 0 SRV 0 0 PORT .'],
  },
  { name: 'web.demo.svc.fall.test', type: 'AAAA', ...nodata('fall.test.') },
  { name: 'web.demo.svc.fall.test', type: 'A', ...ok('web.demo.svc.fall.test. 5 A 10.96.1.10') },
];

function show(r: DigRecord): string {
  return `${r.name} ${r.ttl} ${r.type} ${r.data}`;
}

function normalize(records: DigRecord[]): string[] {
  return records
    .map((r) => {
      if (r.type === 'SOA') return show({ ...r, data: r.data.replace(/^(\S+ \S+) \d+ /, '$1 SERIAL ') });
      if (r.type === 'SRV' && r.name.startsWith('_udp.')) return show({ ...r, data: r.data.replace(/^(\d+ \d+) \d+ /, '$1 PORT ') });
      return show(r);
    })
    .sort();
}

describe('kubernetes conformance (dig against kdns serve)', () => {
  let srv: TestServer;
  const results = new Map<string, Promise<DigResult>>();

  before(async () => {
    srv = await startTestServer(COREFILE);
    // Ask everything up front, a few at a time: the rows then only compare.
    const queue = cases.map((c, i) => ({ c, i }));
    const run = async (): Promise<void> => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const { c, i } = item;
        const p = dig(c.name, c.type, { port: srv.port, args: ['+norec'] });
        results.set(String(i), p);
        await p.catch(() => undefined);
      }
    };
    await Promise.all(Array.from({ length: 6 }, run));
  });

  after(async () => {
    await srv?.stop();
  });

  cases.forEach((c, i) => {
    test(`${c.name} ${c.type} → ${c.rcode}`, async () => {
      const r = await (results.get(String(i)) as Promise<DigResult>);
      assert.equal(r.status, c.rcode, r.raw);
      assert.deepEqual(r.flags, (c.flags ?? 'qr aa').split(' '), r.raw);
      assert.deepEqual(normalize(r.answer), [...(c.answer ?? [])].sort(), r.raw);
      assert.deepEqual(normalize(r.authority), [...(c.authority ?? [])].sort(), r.raw);
      assert.deepEqual(normalize(r.additional), [...(c.additional ?? [])].sort(), r.raw);
    });
  });
});
