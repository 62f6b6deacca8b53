// `view NAME { expr EXPRESSION … }`: the server block takes a query only when every expression
// holds for it. The choice is made by the server while routing (src/server/config.ts
// routeQuery); the plugin itself answers nothing.
import { expectArgs } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { className, typeName } from '../../lib/dns/rr.js';
import type { BlockView, Plugin, SetupFn } from '../../server/plugin.js';
import type { DnsRequest } from '../../server/request.js';
import { parseIP } from '../../lib/dns/ip.js';
import { inSubnet, parseSubnet } from '../pkg/subnet.js';
import { compileExpression, ExprError, holds, IncidrError, type Node, type QueryFacts } from './expr.js';

/** CoreDNS's request.Size() for a TCP query: the largest message. */
const TCP_SIZE = 65535;

/** An IPv4 client of a dual-stack socket, as some listeners give it (::ffff:a.b.c.d). */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** The functions expressions call, read from the request when called. */
export class RequestFacts implements QueryFacts {
  constructor(private readonly req: DnsRequest) {}
  bufsize(): number {
    if (this.req.transport === 'tcp') return TCP_SIZE;
    return Math.max(512, this.req.edns?.udpSize ?? 512);
  }
  class(): string {
    return className(this.req.qclass);
  }
  client_ip(): string {
    return unmapped(this.req.client.remoteAddress);
  }
  do(): boolean {
    return this.req.do;
  }
  id(): number {
    return this.req.id;
  }
  name(): string {
    return this.req.name.toLowerCase();
  }
  opcode(): number {
    return this.req.query.opcode;
  }
  port(): string {
    return String(this.req.client.remotePort);
  }
  proto(): string {
    return this.req.transport;
  }
  server_ip(): string {
    return unmapped(this.req.client.localAddress);
  }
  server_port(): string {
    return String(this.req.client.localPort);
  }
  size(): number {
    return this.req.raw.length;
  }
  type(): string {
    return typeName(this.req.qtype);
  }
}

/** `incidr(ip, cidr)`: whether the address lies in the network; throws for either not being one. */
export function incidr(ip: string, cidr: string): boolean {
  const address = parseIP(ip);
  if (!address) throw new IncidrError('first argument is not an IP address');
  const subnet = cidr.includes('/') ? parseSubnet(cidr) : undefined;
  if (!subnet) throw new IncidrError(`invalid CIDR address: ${cidr}`);
  return inSubnet(subnet, address, 0, address.length);
}

export interface ViewConfig {
  name: string;
  expressions: Array<{ text: string; node: Node }>;
}

export function parseView(d: Directive): ViewConfig {
  const [name] = expectArgs(d, 1, 1) as [string];
  const expressions: ViewConfig['expressions'] = [];
  for (const prop of d.block ?? []) {
    if (prop.name !== 'expr') throw CorefileError.at(prop, `unknown property "${prop.name}" in view block`);
    // The words of the line make the expression, as CoreDNS joins them.
    const text = prop.args.join(' ');
    if (text === '') throw CorefileError.at(prop, 'expr needs an expression');
    try {
      expressions.push({ text, node: compileExpression(text) });
    } catch (e) {
      if (e instanceof ExprError) throw CorefileError.at(prop, `view ${name}: invalid expression "${text}": ${e.message}`);
      throw e;
    }
  }
  return { name, expressions };
}

/** The condition routing asks: every expression holds. */
export function blockView(config: ViewConfig): BlockView {
  const nodes = config.expressions.map((e) => e.node);
  return {
    name: config.name,
    matches(req: DnsRequest): boolean {
      const facts = new RequestFacts(req);
      return nodes.every((n) => holds(n, facts, incidr));
    },
  };
}

export const setup: SetupFn = (ctx) => {
  if (ctx.block.settings.view) throw CorefileError.at(ctx.directive, 'view can only be used once per server block');
  const config = parseView(ctx.directive);
  ctx.block.settings.view = blockView(config);
  const plugin: Plugin = { name: 'view' };
  return plugin;
};
