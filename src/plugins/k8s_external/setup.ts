// `k8s_external` setup: read the block; the kubernetes plugin of the same server block is
// found when the server starts (it is set up after us: plugins set up in chain order).

import { argPosition, blockProperties, expectArgs, invalidArg, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { instanceKey, KubernetesPlugin } from '../kubernetes/index.js';
import { parseFallthrough } from '../pkg/fallthrough.js';
import { normalizeZones } from '../pkg/zones.js';
import { DEFAULT_APEX, DEFAULT_TTL, ExternalPlugin, MAX_TTL, type ExternalConfig } from './handler.js';

/** A DNS label: the apex option names one (`dns` gives `ns1.dns.<zone>`). */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** `k8s_external [ZONES...] { apex APEX  ttl TTL  headless  fallthrough [ZONES...] }`. */
export function parseExternal(d: Directive, blockZones: readonly string[]): ExternalConfig {
  const zones = d.args.length > 0 ? d.args.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const config: ExternalConfig = { zones, apex: DEFAULT_APEX, ttl: DEFAULT_TTL, headless: false };
  for (const prop of blockProperties(d, 'k8s_external')) {
    switch (prop.name) {
      case 'apex': {
        const [label] = expectArgs(prop, 1, 1) as [string];
        if (!LABEL.test(label)) invalidArg(prop, label, 'the apex is one DNS label, such as "dns"');
        config.apex = label.toLowerCase();
        break;
      }
      case 'ttl':
        config.ttl = parseIntArg(expectArgs(prop, 1, 1)[0] as string, argPosition(prop, 0), { what: 'ttl', min: 0, max: MAX_TTL });
        break;
      case 'headless':
        expectArgs(prop, 0, 0);
        config.headless = true;
        break;
      case 'fallthrough':
        config.fallthrough = parseFallthrough(prop);
        break;
      default:
        unknownProperty(prop, 'k8s_external');
    }
  }
  return config;
}

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  const config = parseExternal(d, ctx.block.zones);
  // CoreDNS finds this out only at start-up; the block's plugin list already says it.
  if (!ctx.block.plugins.includes('kubernetes')) throw CorefileError.at(d, 'k8s_external needs the kubernetes plugin in the same server block');
  const key = instanceKey(ctx.block.file, ctx.block.line);
  return new ExternalPlugin(config, () => {
    const k = ctx.instance.get(key);
    return k instanceof KubernetesPlugin ? k : undefined;
  });
};
