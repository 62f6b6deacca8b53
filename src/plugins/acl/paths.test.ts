// Every path by which a client could get data of a name acl refuses it, each tried on a running
// kdns with the real dig: plugins ahead of acl that put another question in the client's place
// (rewrite, autopath, its ap.k8s.io names), the cache behind it, and CNAME chains that plugins
// behind it follow (kubernetes ExternalName, file, template, k8s_external, rewrite's cname
// rule) or that an upstream answers. The client 127.0.0.1 is the one refused; 127.0.0.2 is
// allowed wherever a case has rules for both.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeMessage } from '../../lib/dns/codec.js';
import * as rr from '../../lib/dns/rr.js';
import { RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import { dig, type DigRecord, type DigResult } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { ownedByQuestionOnly, withholdRefused } from './handler.js';

const REFUSED_CLIENT = '127.0.0.1';
const ALLOWED_CLIENT = '127.0.0.2';

/** A small cluster: an ExternalName inside the cluster zone, one outside it, a load balancer named by hostname. */
const CLUSTER = `
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  clusterIP: 10.96.100.10
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: demo}
spec: {type: ExternalName, externalName: web.demo.svc.cluster.local}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: demo}
spec: {type: ExternalName, externalName: x.secret.example}
---
apiVersion: v1
kind: Service
metadata: {name: cloud, namespace: demo}
spec:
  type: LoadBalancer
  clusterIP: 10.96.100.11
  ports: [{name: http, protocol: TCP, port: 80}]
status:
  loadBalancer:
    ingress: [{hostname: lb.secret.example}]
`;

const SECRET_ZONE = `$ORIGIN secret.example.
@ 300 IN SOA ns hostmaster 1 3600 600 86400 60
@ 300 IN NS ns
ns 300 IN A 192.0.2.53
x 300 IN A 192.0.2.66
lb 300 IN A 192.0.2.67
`;

const ORG_ZONE = `$ORIGIN example.org.
@ 300 IN SOA ns hostmaster 1 3600 600 86400 60
@ 300 IN NS ns
ns 300 IN A 192.0.2.53
alias 300 IN CNAME x.secret.example.org.
x.secret 300 IN A 192.0.2.77
`;

interface Step {
  from: string;
  q: string;
  type?: string;
  /** "STATUS" then each answer record as "name type data", then "+" and each additional one. */
  want: string;
}

interface PathCase {
  path: string;
  corefile: string;
  files?: Record<string, string>;
  cluster?: boolean;
  /** Run the server's listener to this upstream Corefile first (its port replaces {UPSTREAM}). */
  upstream?: string;
  steps: Step[];
}

const ACL_SECRET = '    acl secret.example {\n        allow net 127.0.0.2/32\n        block\n    }\n';

const cases: PathCase[] = [
  {
    path: 'rewrite maps an allowed name into a refused zone',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl secret.example {
        block
    }
    rewrite name exact open.example. x.secret.example.
    hosts {
        1.2.3.4 x.secret.example
    }
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'x.secret.example', want: 'REFUSED' },
      { from: REFUSED_CLIENT, q: 'open.example', want: 'REFUSED' },
    ],
  },
  {
    path: 'rewrite maps a refused name to an allowed one',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl secret.example {
        block
    }
    rewrite name exact x.secret.example. open.example.
    hosts {
        5.6.7.8 open.example
    }
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'x.secret.example', want: 'REFUSED' },
      { from: REFUSED_CLIENT, q: 'open.example', want: 'NOERROR open.example. A 5.6.7.8' },
    ],
  },
  {
    path: "rewrite's cname rule chases a target into a refused zone",
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl secret.example {
        block
    }
    rewrite cname exact a.example. x.secret.example.
    template IN A start.example {
        answer "start.example. 30 IN CNAME a.example."
    }
    hosts {
        1.2.3.4 x.secret.example
    }
}
`,
    steps: [{ from: REFUSED_CLIENT, q: 'start.example', want: 'NOERROR start.example. CNAME x.secret.example.' }],
  },
  {
    path: 'autopath (search list from a file) lands on a refused name',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl protected.example {
        block
    }
    autopath resolv.conf
    hosts {
        192.0.2.123 secret.protected.example
    }
}
`,
    files: { 'resolv.conf': 'search public.example protected.example\n' },
    steps: [
      { from: REFUSED_CLIENT, q: 'secret.protected.example', want: 'REFUSED' },
      { from: REFUSED_CLIENT, q: 'secret.public.example', want: 'NXDOMAIN' },
    ],
  },
  {
    path: 'autopath skips a candidate acl drops instead of answering with it',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl protected.example {
        drop
    }
    autopath resolv.conf
    hosts {
        192.0.2.123 secret.protected.example
    }
}
`,
    files: { 'resolv.conf': 'search public.example protected.example\n' },
    steps: [{ from: REFUSED_CLIENT, q: 'secret.public.example', want: 'NXDOMAIN' }],
  },
  {
    path: 'autopath expands an ap.k8s.io name onto a refused host search path',
    cluster: true,
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl protected.example {
        block
    }
    autopath ap.k8s.io resolv.conf
    template IN A protected.example {
        answer "{{ .Name }} 30 IN A 192.0.2.123"
    }
    kubernetes cluster.local
}
`,
    files: { 'resolv.conf': 'search protected.example\n' },
    steps: [{ from: REFUSED_CLIENT, q: 'x.search.demo.cluster.local.ap.k8s.io', want: 'NXDOMAIN' }],
  },
  {
    path: 'an ap.k8s.io name is judged as asked, before autopath expands it',
    cluster: true,
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl ap.k8s.io {
        allow net 127.0.0.2/32
        block
    }
    autopath ap.k8s.io resolv.conf
    kubernetes cluster.local
}
`,
    files: { 'resolv.conf': 'nameserver 192.0.2.1\n' },
    steps: [
      { from: REFUSED_CLIENT, q: 'web.search.demo.cluster.local.ap.k8s.io', want: 'REFUSED' },
      {
        from: ALLOWED_CLIENT,
        q: 'web.search.demo.cluster.local.ap.k8s.io',
        want: 'NOERROR web.search.demo.cluster.local.ap.k8s.io. CNAME web.demo.svc.cluster.local. | web.demo.svc.cluster.local. A 10.96.100.10',
      },
    ],
  },
  {
    path: 'cache: an answer stored for an allowed client is not given to a refused one',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl protected.example {
        allow net 127.0.0.2/32
        block
    }
    cache 30
    template IN A protected.example {
        answer "{{ .Name }} 30 IN A 192.0.2.124"
    }
}
`,
    steps: [
      { from: ALLOWED_CLIENT, q: 'secret.protected.example', want: 'NOERROR secret.protected.example. A 192.0.2.124' },
      { from: REFUSED_CLIENT, q: 'secret.protected.example', want: 'REFUSED' },
    ],
  },
  {
    path: 'cache: a CNAME chain stored for an allowed client loses the refused name for a refused one',
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    cache 30
    template IN A open.example {
        answer "open.example. 30 IN CNAME x.secret.example."
    }
    hosts {
        192.0.2.66 x.secret.example
    }
}
`,
    steps: [
      { from: ALLOWED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example. | x.secret.example. A 192.0.2.66' },
      { from: REFUSED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example. | x.secret.example. A 192.0.2.66' },
    ],
  },
  {
    path: 'template follows its CNAME into a refused zone',
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    template IN A open.example {
        answer "open.example. 30 IN CNAME x.secret.example."
    }
    hosts {
        192.0.2.66 x.secret.example
    }
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example. | x.secret.example. A 192.0.2.66' },
    ],
  },
  {
    path: 'template glue (additional section) of a refused name',
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    template IN MX open.example {
        answer "open.example. 30 IN MX 10 mail.secret.example."
        additional "mail.secret.example. 30 IN A 192.0.2.25"
    }
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'open.example', type: 'MX', want: 'NOERROR open.example. MX 10 mail.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'open.example', type: 'MX', want: 'NOERROR open.example. MX 10 mail.secret.example. + mail.secret.example. A 192.0.2.25' },
    ],
  },
  {
    path: 'file follows a CNAME inside its zone into a refused name',
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl secret.example.org {
        allow net 127.0.0.2/32
        block
    }
    file db.example.org example.org
}
`,
    files: { 'db.example.org': ORG_ZONE },
    steps: [
      { from: REFUSED_CLIENT, q: 'alias.example.org', want: 'NOERROR alias.example.org. CNAME x.secret.example.org.' },
      { from: ALLOWED_CLIENT, q: 'alias.example.org', want: 'NOERROR alias.example.org. CNAME x.secret.example.org. | x.secret.example.org. A 192.0.2.77' },
    ],
  },
  {
    path: 'kubernetes ExternalName inside the cluster zone to a refused Service',
    cluster: true,
    corefile: `.:{PORT} {
    bind 127.0.0.1
    acl web.demo.svc.cluster.local {
        allow net 127.0.0.2/32
        block
    }
    kubernetes cluster.local
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'web.demo.svc.cluster.local', want: 'REFUSED' },
      { from: REFUSED_CLIENT, q: 'frontend.demo.svc.cluster.local', want: 'NOERROR frontend.demo.svc.cluster.local. CNAME web.demo.svc.cluster.local.' },
      { from: ALLOWED_CLIENT, q: 'frontend.demo.svc.cluster.local', want: 'NOERROR frontend.demo.svc.cluster.local. CNAME web.demo.svc.cluster.local. | web.demo.svc.cluster.local. A 10.96.100.10' },
    ],
  },
  {
    path: 'kubernetes ExternalName to a refused name outside the cluster, looked up behind acl',
    cluster: true,
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    kubernetes cluster.local
    file db.secret.example secret.example
}
`,
    files: { 'db.secret.example': SECRET_ZONE },
    steps: [
      { from: REFUSED_CLIENT, q: 'ext.demo.svc.cluster.local', want: 'NOERROR ext.demo.svc.cluster.local. CNAME x.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'ext.demo.svc.cluster.local', want: 'NOERROR ext.demo.svc.cluster.local. CNAME x.secret.example. | x.secret.example. A 192.0.2.66' },
    ],
  },
  {
    path: "k8s_external: a load balancer's hostname in a refused zone",
    cluster: true,
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    kubernetes cluster.local
    k8s_external example.com
    file db.secret.example secret.example
}
`,
    files: { 'db.secret.example': SECRET_ZONE },
    steps: [
      { from: REFUSED_CLIENT, q: 'cloud.demo.example.com', want: 'NOERROR cloud.demo.example.com. CNAME lb.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'cloud.demo.example.com', want: 'NOERROR cloud.demo.example.com. CNAME lb.secret.example. | lb.secret.example. A 192.0.2.67' },
    ],
  },
  {
    path: "forward: an upstream's CNAME chain into a refused zone",
    upstream: `.:{PORT} {
    bind 127.0.0.1
    template IN A open.example {
        answer "open.example. 30 IN CNAME x.secret.example."
        answer "x.secret.example. 30 IN A 192.0.2.66"
    }
}
`,
    corefile: `.:{PORT} {
    bind 127.0.0.1
${ACL_SECRET}    forward . 127.0.0.1:{UPSTREAM}
}
`,
    steps: [
      { from: REFUSED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example.' },
      { from: ALLOWED_CLIENT, q: 'open.example', want: 'NOERROR open.example. CNAME x.secret.example. | x.secret.example. A 192.0.2.66' },
    ],
  },
];

const record = (r: DigRecord): string => `${r.name} ${r.type} ${r.data}`;

function summary(r: DigResult): string {
  const parts = [r.status];
  if (r.answer.length > 0) parts.push(r.answer.map(record).join(' | '));
  if (r.additional.length > 0) parts.push(`+ ${r.additional.map(record).join(' | ')}`);
  return parts.join(' ');
}

describe('acl: no path answers a client with data of a name it is refused', () => {
  const running: TestServer[] = [];
  after(async () => {
    await Promise.all(running.map((s) => s.stop()));
  });

  for (const c of cases) {
    test(c.path, async () => {
      let corefile = c.corefile;
      if (c.upstream) {
        const up = await startTestServer(c.upstream);
        running.push(up);
        corefile = corefile.replaceAll('{UPSTREAM}', String(up.port));
      }
      let clusterDir: string | undefined;
      if (c.cluster) {
        clusterDir = mkdtempSync(join(tmpdir(), 'kdns-acl-paths-'));
        writeFileSync(join(clusterDir, 'cluster.yaml'), CLUSTER);
      }
      const s = await startTestServer(corefile, { files: c.files, clusterDir });
      running.push(s);
      const got: string[] = [];
      for (const step of c.steps) {
        const r = await dig(step.q, step.type ?? 'A', { port: s.port, args: ['-b', step.from] });
        got.push(`${step.from} ${step.q}: ${summary(r)}`);
      }
      assert.deepEqual(
        got,
        c.steps.map((step) => `${step.from} ${step.q}: ${step.want}`),
      );
    });
  }
});

// ---- which replies acl looks into, and what it withholds --------------------------------------

function reply(sections: { answers?: ResourceRecord[]; authority?: ResourceRecord[]; additional?: ResourceRecord[]; rcode?: number; edns?: boolean }): Message {
  return {
    id: 1,
    qr: true,
    opcode: 0,
    aa: true,
    tc: false,
    rd: true,
    ra: false,
    z: false,
    ad: false,
    cd: false,
    rcode: sections.rcode ?? RCode.NOERROR,
    questions: [{ name: 'www.example.', type: RRType.A, class: 1 }],
    answers: sections.answers ?? [],
    authority: sections.authority ?? [],
    additional: sections.additional ?? [],
    edns: sections.edns ? { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] } : undefined,
  };
}

const SOA = rr.soa('example.', 60, { mname: 'ns.example.', rname: 'hostmaster.example.', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 });
const SECRET_SOA = rr.soa('secret.example.', 60, { mname: 'ns.secret.example.', rname: 'hostmaster.secret.example.', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 });

describe('acl: replies that hold only the question name are passed without a look', () => {
  const cases: Array<{ what: string; msg: Message; want: boolean }> = [
    { what: 'addresses of the question', msg: reply({ answers: [rr.a('www.example.', 30, '192.0.2.1'), rr.a('www.example.', 30, '192.0.2.2')] }), want: true },
    { what: 'with an OPT record', msg: reply({ answers: [rr.a('www.example.', 30, '192.0.2.1')], edns: true }), want: true },
    { what: 'a denial: the SOA of the zone is not looked at', msg: reply({ rcode: RCode.NXDOMAIN, authority: [SOA] }), want: true },
    { what: 'a CNAME chain', msg: reply({ answers: [rr.cname('www.example.', 30, 'x.secret.example.'), rr.a('x.secret.example.', 30, '192.0.2.66')] }), want: false },
    { what: 'glue of another name', msg: reply({ answers: [rr.a('www.example.', 30, '192.0.2.1')], additional: [rr.a('ns.example.', 30, '192.0.2.53')] }), want: false },
  ];
  for (const c of cases) test(c.what, () => assert.equal(ownedByQuestionOnly(encodeMessage(c.msg)), c.want));
});

describe('acl: what is withheld from an allowed answer', () => {
  const refused = (name: string, qtype: number): boolean => name.endsWith('secret.example.') && qtype !== RRType.TXT;
  const text = (m: Message | undefined): string =>
    m === undefined
      ? 'unchanged'
      : `rcode ${m.rcode}; ${[...m.answers.map((r) => `an ${r.name} ${r.type}`), ...m.authority.map((r) => `ns ${r.name} ${r.type}`), ...m.additional.map((r) => `ar ${r.name} ${r.type}`)].join(', ')}`;
  const cases: Array<{ what: string; msg: Message; want: string }> = [
    { what: 'nothing of a refused name', msg: reply({ answers: [rr.cname('www.example.', 30, 'x.other.example.'), rr.a('x.other.example.', 30, '192.0.2.9')] }), want: 'unchanged' },
    {
      what: 'a chain is cut before the first record of a refused name',
      msg: reply({ answers: [rr.cname('www.example.', 30, 'x.secret.example.'), rr.cname('x.secret.example.', 30, 'y.other.example.'), rr.a('y.other.example.', 30, '192.0.2.9')] }),
      want: 'rcode 0; an www.example. 5',
    },
    {
      what: "a chain ending in the refused name's NXDOMAIN becomes NOERROR without its SOA",
      msg: reply({ rcode: RCode.NXDOMAIN, answers: [rr.cname('www.example.', 30, 'x.secret.example.'), rr.cname('x.secret.example.', 30, 'gone.secret.example.')], authority: [SECRET_SOA] }),
      want: 'rcode 0; an www.example. 5',
    },
    { what: 'glue of a refused name goes, other glue stays', msg: reply({ answers: [rr.a('www.example.', 30, '192.0.2.1')], additional: [rr.a('ns.secret.example.', 30, '192.0.2.53'), rr.a('ns.example.', 30, '192.0.2.54')] }), want: 'rcode 0; an www.example. 1, ar ns.example. 1' },
    { what: 'the question name itself is never withheld (acl judged it)', msg: reply({ answers: [rr.a('www.example.', 30, '192.0.2.1')], authority: [SECRET_SOA] }), want: 'unchanged' },
  ];
  for (const c of cases) test(c.what, () => assert.equal(text(withholdRefused(c.msg, 'www.example.', refused, RRType.A)), c.want));
});
