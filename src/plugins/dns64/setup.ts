// `dns64 [PREFIX] { prefix PREFIX; translate_all; allow_ipv4 }`
import { argPosition, blockProperties, expectArgs } from '../../lib/corefile/args.js';
import { CorefileError, type Directive, type Position } from '../../lib/corefile/ast.js';
import { counter } from '../../server/metrics.js';
import type { SetupFn } from '../../server/plugin.js';
import { serverLabel } from '../pkg/metrics.js';
import { parseSubnet } from '../pkg/subnet.js';
import { Dns64Plugin, type Dns64Config } from './handler.js';

/** The well-known prefix of RFC 6052. */
export const WELL_KNOWN_PREFIX = '64:ff9b::/96';

/** An IPv6 prefix of a length RFC 6052 defines (32, 40, 48, 56, 64 or 96). */
function parsePrefix(text: string, at: Position): Dns64Config['prefix'] {
  const subnet = text.includes('/') ? parseSubnet(text) : undefined;
  if (!subnet) throw CorefileError.at(at, `dns64: invalid prefix "${text}" (expected an IPv6 prefix such as ${WELL_KNOWN_PREFIX})`);
  if (subnet.bytes.length !== 16) throw CorefileError.at(at, `dns64: prefix "${text}" is not IPv6`);
  if (subnet.prefix % 8 !== 0 || subnet.prefix < 32 || subnet.prefix > 96) {
    throw CorefileError.at(at, `dns64: invalid prefix length /${subnet.prefix} in "${text}" (RFC 6052 allows 32, 40, 48, 56, 64 or 96)`);
  }
  // The bits past the length are dropped, as Go's ParseCIDR masks them.
  const bytes = new Uint8Array(16);
  bytes.set(subnet.bytes.subarray(0, subnet.prefix / 8));
  return { text, bytes, length: subnet.prefix };
}

export function parseDns64(d: Directive): Dns64Config {
  const [prefixArg] = expectArgs(d, 0, 1);
  const config: Dns64Config = { prefix: parsePrefix(prefixArg ?? WELL_KNOWN_PREFIX, argPosition(d, 0)), translateAll: false, allowIPv4: false };
  // Unlike CoreDNS, whose parser skips the block when a PREFIX argument is given, the block's
  // options apply with either form.
  for (const prop of blockProperties(d, 'dns64')) {
    switch (prop.name) {
      case 'prefix':
        config.prefix = parsePrefix(expectArgs(prop, 1, 1)[0] as string, argPosition(prop, 0));
        break;
      case 'translate_all':
        expectArgs(prop, 0, 0);
        config.translateAll = true;
        break;
      case 'allow_ipv4':
        expectArgs(prop, 0, 0);
        config.allowIPv4 = true;
        break;
      default:
        throw CorefileError.at(prop, `unknown property "${prop.name}" in dns64 block`);
    }
  }
  return config;
}

export const setup: SetupFn = (ctx) => {
  const config = parseDns64(ctx.directive);
  const translated = counter(ctx.shared.metrics, 'coredns_dns64_requests_translated_total', 'Counter of DNS requests translated by dns64.', ['server']);
  const { settings, port } = ctx.block;
  // Read at query time: bind fills the listen addresses while the block is set up.
  const serverFor = (localAddress: string): string => serverLabel(settings.listenAddresses.includes(localAddress) ? localAddress : '', port);
  return new Dns64Plugin(config, translated, serverFor);
};
