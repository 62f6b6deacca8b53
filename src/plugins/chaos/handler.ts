// Answers the CHAOS-class TXT names that operators and monitoring tools use to ask a server
// who it is: version.bind/version.server, hostname.bind/id.server (RFC 4892) and authors.bind.

import { hostname } from 'node:os';
import { DnsClass, RRType, type ResourceRecord } from '../../lib/dns/types.js';
import type { Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';

/** A TXT character-string holds at most 255 bytes. */
export function trimToCharacterString(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  return bytes.length <= 255 ? bytes.toString('latin1') : bytes.subarray(0, 255).toString('latin1');
}

export interface ChaosConfig {
  version: string;
  authors: string[];
}

/** What each name answers with: one string per TXT record, or undefined when we do not know the name. */
export function chaosStrings(name: string, config: ChaosConfig, host: () => string = hostname): string[] | undefined {
  switch (name) {
    case 'version.bind.':
    case 'version.server.':
      return [config.version];
    case 'hostname.bind.':
    case 'id.server.':
      return [host() || 'localhost'];
    case 'authors.bind.':
      return shuffled(config.authors);
    default:
      return undefined;
  }
}

/** Authors in random order, as CoreDNS does, so no one is always first. */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function txt(owner: string, text: string): ResourceRecord {
  return { name: owner, type: RRType.TXT, class: DnsClass.CH, ttl: 0, data: { strings: [trimToCharacterString(text)] } };
}

export class ChaosPlugin implements Plugin {
  readonly name = 'chaos';

  constructor(
    readonly config: ChaosConfig,
    private readonly host: () => string = hostname,
  ) {}

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    if (req.qclass !== DnsClass.CH || req.qtype !== RRType.TXT) return next(req);
    const strings = chaosStrings(req.name, this.config, this.host);
    if (strings === undefined) return next(req);
    const msg = responseFor(req);
    for (const s of strings) msg.answers.push(txt(req.qname, s));
    return Reply.of(msg);
  }
}
