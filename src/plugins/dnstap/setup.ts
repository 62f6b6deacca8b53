// `dnstap SOCKET [full] [WRITEBUFFER] [QUEUE] { identity IDENTITY  version VERSION  extra EXTRA  skipverify }`.

import { createRequire } from 'node:module';
import { blockProperties, expectArgs, invalidArg, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { blockTaps } from '../pkg/taps.js';
import { splitHostPort } from '../pkg/upstreams.js';
import { DEFAULT_WRITER_OPTIONS, FrameStreamWriter, type Endpoint } from './fstrm.js';
import { DnstapPlugin, defaultIdentity, type DnstapConfig } from './handler.js';

const require = createRequire(import.meta.url);

function kdnsVersion(): string {
  return (require('../../../package.json') as { version: string }).version;
}

/** Messages CoreDNS keeps per unit of QUEUE. */
export const QUEUE_UNIT = 10_000;

/** `unix:///path`, `/path` (or a relative path), `tcp://host:port`. */
export function parseEndpoint(d: Directive, text: string, corefilePath: string): Endpoint {
  if (text.startsWith('tcp://')) {
    const hp = splitHostPort(text.slice('tcp://'.length), 0);
    if (typeof hp === 'string') return invalidArg(d, text, hp);
    if (hp.port === 0) return invalidArg(d, text, 'a TCP endpoint needs a port');
    return { kind: 'tcp', host: hp.host, port: hp.port };
  }
  if (text.startsWith('tls://')) return invalidArg(d, text, 'dnstap over TLS is not available in kdns: send to a unix:// or tcp:// collector');
  if (/^[a-z]+:\/\//.test(text) && !text.startsWith('unix://')) return invalidArg(d, text, 'expected unix://PATH, tcp://HOST:PORT or a socket path');
  const path = text.startsWith('unix://') ? text.slice('unix://'.length) : text;
  if (path === '') return invalidArg(d, text, 'empty socket path');
  return { kind: 'unix', path: corefileRelative(path, corefilePath) };
}

export function parseDnstap(d: Directive, corefilePath: string): DnstapConfig {
  const args = expectArgs(d, 1, 4);
  if (args[0] === 'listen') throw CorefileError.at(d, 'dnstap listen is not available in kdns: have kdns connect to the collector (dnstap unix:///PATH or tcp://HOST:PORT)');
  const endpoint = parseEndpoint(d, args[0] as string, corefilePath);
  let rest = args.slice(1);
  const full = rest[0] === 'full';
  if (full) rest = rest.slice(1);
  else if (rest.length > 0 && !/^[0-9]+$/.test(rest[0] as string)) invalidArg(d, rest[0] as string, 'expected "full" or a number');
  // WRITEBUFFER (MiB of TCP write buffer in CoreDNS) is checked and otherwise has no effect:
  // kdns writes through Node's socket buffer and queues frames itself.
  if (rest[0] !== undefined) parseIntArg(rest[0], d, { what: 'writebuffer', min: 1, max: 1024 });
  const queue = rest[1] === undefined ? 1 : parseIntArg(rest[1], d, { what: 'queue', min: 1, max: 4096 });
  const config: DnstapConfig = { endpoint, full, identity: defaultIdentity(), version: `kdns-${kdnsVersion()}`, queueLimit: queue * QUEUE_UNIT };
  for (const prop of blockProperties(d, 'dnstap')) {
    switch (prop.name) {
      case 'identity':
        config.identity = expectArgs(prop, 1, 1)[0] as string;
        break;
      case 'version':
        config.version = expectArgs(prop, 1, 1)[0] as string;
        break;
      case 'extra':
        config.extra = expectArgs(prop, 1, 1)[0] as string;
        break;
      case 'skipverify':
        // Only meaningful for TLS, which kdns does not offer; accepted as CoreDNS accepts it anywhere.
        expectArgs(prop, 0, 0);
        break;
      default:
        unknownProperty(prop, 'dnstap');
    }
  }
  return config;
}

export const setup: SetupFn = (ctx) => {
  const config = parseDnstap(ctx.directive, ctx.corefilePath);
  const writer = new FrameStreamWriter(config.endpoint, ctx.shared.log.plugin('dnstap'), { ...DEFAULT_WRITER_OPTIONS, queueLimit: config.queueLimit });
  const plugin = new DnstapPlugin(config, writer);
  // forward in the same block reports its exchanges with upstreams here.
  blockTaps(ctx.instance, ctx.block).push(plugin);
  return plugin;
};
