// `metadata [ZONES...]`: in CoreDNS it asks plugins to publish request metadata for others
// (log's {/name} placeholders, acl, firewall). kdns requests always carry their metadata map,
// so the directive only checks its zones.
import { noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';
import { zoneArgs } from '../pkg/zones.js';

export function parseMetadata(d: Directive): string[] {
  noBlockAllowed(d);
  return zoneArgs(d, d.args);
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'metadata');
  parseMetadata(ctx.directive);
  return { name: 'metadata' };
};
