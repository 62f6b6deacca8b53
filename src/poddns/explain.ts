// `kdns explain` as pure functions: a pod's resolv.conf under one or several policies, the
// queries each libc sends for a name, and the text that shows it. The CLI only does the I/O.

import type { PodSpec } from '../lib/cluster/types.js';
import { isKdnsPolicy, policyAnnotationHint, policyAnnotations, WEBHOOK_NOTE } from './annotations.js';
import type { KdnsPolicy } from './annotations.js';
import { computePodDNS } from './compute.js';
import { customSearchField } from './custom.js';
import type { NodeDNSSettings } from './compute.js';
import { predictLookup } from './queries.js';
import type { Family, Libc, NameOracle, Prediction, PredictedQuery } from './queries.js';
import { renderResolvConf } from './resolvconf.js';
import type { ResolvConf } from './resolvconf.js';

export interface PolicyExplanation {
  policy: string;
  config: ResolvConf;
  resolvConf: string;
  warnings: string[];
  lookups: Prediction[];
}

export interface ExplainRequest {
  spec: PodSpec;
  namespace: string;
  node: NodeDNSSettings;
  name: string;
  libcs: readonly Libc[];
  oracle: NameOracle;
  family?: Family;
}

/** The policies `--compare` puts side by side: Custom only when the pod carries Custom parameters. */
export function comparedPolicies(spec: PodSpec): string[] {
  return ['ClusterFirst', ...(spec.dnsParams?.custom !== undefined ? ['Custom'] : []), 'ClusterFirstWithAutopath'];
}

/** The pod as it would be with another policy; dnsParams only travel with Custom (elsewhere they are forbidden). */
export function withPolicy(spec: PodSpec, policy: string): PodSpec {
  const { dnsParams, ...rest } = spec;
  return policy === 'Custom' && dnsParams !== undefined ? { ...rest, dnsPolicy: policy, dnsParams } : { ...rest, dnsPolicy: policy };
}

export function explainPolicy(req: ExplainRequest, policy: string): PolicyExplanation {
  const spec = withPolicy(req.spec, policy);
  const { config, warnings } = computePodDNS({ spec, namespace: req.namespace }, req.node);
  const resolvConf = renderResolvConf(config);
  const lookups = req.libcs.map((libc) => predictLookup(resolvConf, req.name, libc, req.oracle, req.family !== undefined ? { family: req.family } : {}));
  return { policy, config, resolvConf, warnings, lookups };
}

function describeResult(p: Prediction): string {
  switch (p.result) {
    case 'resolved':
      return `answered by ${p.answeredBy ?? '?'}`;
    case 'nodata':
      return 'the name exists but has no address (EAI_NODATA)';
    case 'nxdomain':
      return 'not found (EAI_NONAME)';
    case 'local':
      return 'answered locally (address or /etc/hosts)';
    case 'timeout':
      return `no usable answer: fails with EAI_AGAIN after ${p.view.timeout} s`;
  }
}

function outcomeText(q: PredictedQuery): string {
  if (q.malformed) return 'malformed, no answer';
  return q.outcome === 'answer' ? 'answer' : q.outcome === 'nodata' ? 'NODATA' : q.outcome === 'nxdomain' ? 'NXDOMAIN' : 'no answer';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n');
}

function parallelism(p: Prediction): string {
  const n = p.view.nameservers.length;
  if (p.libc === 'glibc') return `glibc sends A and AAAA together to the first of ${n} nameserver(s) (the others only if it does not answer)`;
  return `musl sends every query to all ${n} nameserver(s) at once and takes the first answer`;
}

export function formatLookup(p: Prediction): string {
  const lines = [`${p.libc === 'glibc' ? 'glibc 2.36' : 'musl 1.2.3'} (model): ${p.explanation[0] ?? ''}`];
  for (const e of p.explanation.slice(1)) lines.push(`  ${e}`);
  for (const n of p.view.notes) lines.push(`  note: ${n}`);
  if (p.queries.length > 0) {
    lines.push(`  ${parallelism(p)}`);
    const rows = [['#', 'query', 'type', 'to', 'result']];
    p.queries.forEach((q, i) => rows.push([String(i + 1), q.qname, q.qtype, q.server, outcomeText(q)]));
    lines.push(...table(rows).split('\n').map((l) => `  ${l}`));
  }
  lines.push(`  => ${describeResult(p)}; ${p.queries.length} ${p.queries.length === 1 ? 'query' : 'queries'}`);
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

export function formatPolicy(e: PolicyExplanation): string {
  const parts = [`dnsPolicy ${e.policy}: resolv.conf`, e.resolvConf === '' ? '  (empty)' : indent(e.resolvConf)];
  for (const w of e.warnings) parts.push(`  warning: ${w}`);
  parts.push('', ...e.lookups.map(formatLookup));
  return parts.join('\n');
}

/**
 * How the pod asks for each kdns policy of the comparison: the annotations under its own
 * metadata path (`spec.template.metadata` in a Deployment), Custom with the pod's parameters.
 * The literal `dnsPolicy` is never the advice: a stock API server refuses it.
 */
export function policyAnnotationAdvice(policies: readonly string[], spec: PodSpec, metadataPath: string): PolicyAdvice[] {
  const custom = spec.dnsParams?.custom;
  const params = custom === undefined ? undefined : { search: customSearchField(custom).entries, ...(custom.options !== undefined ? { options: custom.options } : {}) };
  return policies.filter(isKdnsPolicy).map((policy) => {
    const forPolicy = policy === 'Custom' ? params : undefined;
    return { policy, metadataPath, annotations: policyAnnotations(policy, forPolicy), hint: policyAnnotationHint(policy, metadataPath, forPolicy) };
  });
}

/** How a pod asks for one kdns policy. */
export interface PolicyAdvice {
  policy: KdnsPolicy;
  /** Where the annotations go: `metadata`, `spec.template.metadata`, …. */
  metadataPath: string;
  annotations: Record<string, string>;
  /** `<metadataPath>.annotations: {…}`, as printed. */
  hint: string;
}

function adviceText(advice: readonly PolicyAdvice[]): string[] {
  if (advice.length === 0) return [];
  const width = Math.max(...advice.map((a) => a.policy.length));
  return ['', `To ask for a kdns policy (${WEBHOOK_NOTE}):`, ...advice.map((a) => `  ${a.policy.padEnd(width)}  ${a.hint}`)];
}

/** A summary table with one column per policy, how to ask for the kdns ones, then each policy in full. */
export function formatComparison(list: readonly PolicyExplanation[], advice: readonly PolicyAdvice[] = []): string {
  const libcs = list[0]?.lookups.map((l) => l.libc) ?? [];
  const rows: string[][] = [['', ...list.map((e) => e.policy)]];
  rows.push(['nameservers', ...list.map((e) => e.config.nameservers.join(',') || '-')]);
  rows.push(['search paths', ...list.map((e) => String(e.config.searches.length))]);
  rows.push(['options', ...list.map((e) => e.config.options.join(' ') || '-')]);
  libcs.forEach((libc, i) => {
    rows.push([`${libc} queries`, ...list.map((e) => String(e.lookups[i]?.queries.length ?? 0))]);
    rows.push([`${libc} result`, ...list.map((e) => shortResult(e.lookups[i]))]);
  });
  return [table(rows), ...adviceText(advice), '', ...list.map(formatPolicy).join('\n\n').split('\n')].join('\n');
}

function shortResult(p: Prediction | undefined): string {
  if (p === undefined) return '-';
  return p.result === 'resolved' ? (p.answeredBy ?? 'resolved') : p.result.toUpperCase();
}

/** The JSON form: everything above as data (`annotations`: how to ask for a kdns policy). */
export function explanationJSON(name: string, list: readonly PolicyExplanation[], advice: readonly PolicyAdvice[] = []): unknown {
  const askWith = (policy: string): object => {
    const a = advice.find((x) => x.policy === policy);
    return a === undefined ? {} : { askWith: { metadataPath: a.metadataPath, annotations: a.annotations } };
  };
  return {
    name,
    policies: list.map((e) => ({
      policy: e.policy,
      ...askWith(e.policy),
      resolvConf: e.config,
      warnings: e.warnings,
      lookups: e.lookups.map((p) => ({
        libc: p.libc,
        ndots: p.view.ndots,
        nameservers: p.view.nameservers,
        searches: p.view.searches,
        queries: p.queries.map((q) => ({ qname: q.qname, qtype: q.qtype, server: q.server, result: q.malformed ? 'malformed' : q.outcome })),
        count: p.queries.length,
        result: p.result,
        ...(p.answeredBy !== undefined ? { answeredBy: p.answeredBy } : {}),
        explanation: p.explanation,
        notes: p.view.notes,
      })),
    })),
  };
}
