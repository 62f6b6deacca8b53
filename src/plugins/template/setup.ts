import { argPosition, expectArgs, noBlockAllowed, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { classFromName, rcodeFromName, typeFromName } from '../../lib/dns/rr.js';
import { RCode } from '../../lib/dns/types.js';
import { counter } from '../../server/metrics.js';
import type { Plugin, SetupFn } from '../../server/plugin.js';
import { parseFallthrough } from '../pkg/fallthrough.js';
import { compileGoRegExp } from '../pkg/goregexp.js';
import { serverLabel } from '../pkg/metrics.js';
import { normalizeZones } from '../pkg/zones.js';
import { compileTemplate, type CompiledTemplate } from './gotemplate.js';
import { TemplatePlugin, type TemplateConfig, type TemplateMetrics } from './handler.js';

/** `template CLASS TYPE [ZONE...] { match, answer, additional, authority, rcode, ederror, fallthrough, upstream }`. */
export function parseTemplate(d: Directive, blockZones: readonly string[]): TemplateConfig {
  const [classText, typeText, ...zoneArgs] = expectArgs(d, 2) as [string, string, ...string[]];
  const qclass = classFromName(classText);
  if (qclass === undefined) throw CorefileError.at(argPosition(d, 0), `invalid query class "${classText}" for template`);
  const qtype = typeFromName(typeText);
  if (qtype === undefined) throw CorefileError.at(argPosition(d, 1), `invalid query type "${typeText}" for template`);
  const zones = zoneArgs.length > 0 ? zoneArgs.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const t: TemplateConfig = { qclass, qtype, zones, regex: [], answer: [], additional: [], authority: [], rcode: RCode.NOERROR };
  const seen = new Set<string>();
  const once = (prop: Directive): void => {
    if (seen.has(prop.name)) throw CorefileError.at(prop, `duplicate property "${prop.name}" in template block`);
    seen.add(prop.name);
  };
  for (const prop of d.block ?? []) {
    noBlockAllowed(prop);
    switch (prop.name) {
      case 'match':
        for (const [i, pattern] of expectArgs(prop, 1).entries()) {
          try {
            t.regex.push(compileGoRegExp(pattern));
          } catch (e) {
            throw CorefileError.at(argPosition(prop, i), `could not parse regex: ${(e as Error).message}`);
          }
        }
        break;
      case 'answer':
      case 'additional':
      case 'authority':
        for (const [i, text] of expectArgs(prop, 1).entries()) t[prop.name].push(compile(prop, i, text));
        break;
      case 'rcode': {
        once(prop);
        const [code] = expectArgs(prop, 1, 1) as [string];
        const n = /^[A-Za-z]+$/.test(code) ? rcodeFromName(code) : undefined;
        if (n === undefined) throw CorefileError.at(argPosition(prop, 0), `unknown rcode "${code}" for template (expected NOERROR, NXDOMAIN, SERVFAIL, REFUSED, …)`);
        t.rcode = n;
        break;
      }
      case 'ederror': {
        once(prop);
        const [code, reason] = expectArgs(prop, 1, 2) as [string, string | undefined];
        t.ederror = { code: parseIntArg(code, argPosition(prop, 0), { what: 'extended DNS error code', min: 0, max: 65535 }), reason: reason ?? '' };
        break;
      }
      case 'fallthrough':
        once(prop);
        t.fallthrough = parseFallthrough(prop);
        break;
      case 'upstream':
        // Accepted for old Corefiles: CNAME targets are always looked up through the rest of the chain.
        break;
      case 'var':
      case 'expr':
        throw CorefileError.at(prop, `"${prop.name}" (expressions) is not supported by kdns's template plugin`);
      default:
        unknownProperty(prop, 'template');
    }
  }
  if (t.regex.length === 0) t.regex.push(compileGoRegExp('.*'));
  return t;
}

function compile(prop: Directive, i: number, text: string): CompiledTemplate {
  try {
    return compileTemplate(text);
  } catch (e) {
    throw CorefileError.at(argPosition(prop, i), `could not compile ${prop.name} template ${JSON.stringify(text)}: ${(e as Error).message}`);
  }
}

function metricsFor(registry: Parameters<typeof counter>[0]): TemplateMetrics {
  const labels = ['server', 'zone', 'view', 'class', 'type'] as const;
  const failure = [...labels, 'section', 'template'] as const;
  return {
    matches: counter(registry, 'coredns_template_matches_total', 'Counter of template regex matches.', labels),
    templateFailures: counter(registry, 'coredns_template_template_failures_total', 'Counter of go template failures.', failure),
    rrFailures: counter(registry, 'coredns_template_rr_failures_total', 'Counter of mis-templated RRs.', failure),
  };
}

/** A later `template` of a block: it joined the block's first one. */
const JOINED: Plugin = { name: 'template' };

export const setup: SetupFn = (ctx) => {
  const t = parseTemplate(ctx.directive, ctx.block.zones);
  // The templates of a block are one list: a template whose regexes miss and that has no
  // fallthrough ends it with SERVFAIL, as in CoreDNS.
  const key = `template@${ctx.block.file}:${ctx.block.line}`;
  const existing = ctx.instance.get(key) as TemplatePlugin | undefined;
  if (existing) {
    existing.templates.push(t);
    return JOINED;
  }
  const plugin = new TemplatePlugin({ metrics: metricsFor(ctx.shared.metrics), server: serverLabel(ctx.block.settings.listenAddresses[0] ?? '', ctx.block.port) });
  plugin.templates.push(t);
  ctx.instance.set(key, plugin);
  return plugin;
};
