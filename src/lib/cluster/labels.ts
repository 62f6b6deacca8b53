// Kubernetes label selectors in their string form (`app=web,tier!=db,env in (a,b),!canary`),
// as `kubectl -l` and CoreDNS's `labels`/`namespace_labels` options take them.

export type LabelOperator = 'in' | 'notin' | 'exists' | '!exists';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export interface LabelSelector {
  requirements: LabelRequirement[];
  /** The selector as given, for logs and API requests. */
  text: string;
}

export class LabelSelectorError extends Error {
  constructor(
    readonly selector: string,
    detail: string,
  ) {
    super(`invalid label selector ${JSON.stringify(selector)}: ${detail}`);
    this.name = 'LabelSelectorError';
  }
}

// Keys are an optional DNS-subdomain prefix and a name; values are names or empty.
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas that are not inside a `( … )` value set. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

function checkKey(selector: string, key: string): string {
  if (!KEY.test(key) || key.length > 316) throw new LabelSelectorError(selector, `invalid label key ${JSON.stringify(key)}`);
  return key;
}

function checkValue(selector: string, value: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new LabelSelectorError(selector, `invalid label value ${JSON.stringify(value)}`);
  return value;
}

function parseRequirement(selector: string, part: string): LabelRequirement {
  if (part === '') throw new LabelSelectorError(selector, 'empty requirement');
  if (part.startsWith('!')) return { key: checkKey(selector, part.slice(1).trim()), operator: '!exists', values: [] };
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
  if (set) {
    const values = (set[3] as string).split(',').map((v) => checkValue(selector, v.trim()));
    return { key: checkKey(selector, set[1] as string), operator: set[2] as 'in' | 'notin', values };
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
  if (cmp) {
    const key = checkKey(selector, cmp[1] as string);
    const value = checkValue(selector, (cmp[3] as string).trim());
    return { key, operator: cmp[2] === '!=' ? 'notin' : 'in', values: [value] };
  }
  return { key: checkKey(selector, part), operator: 'exists', values: [] };
}

/** Parses a selector string. Throws LabelSelectorError naming the bad part. */
export function parseLabelSelector(text: string): LabelSelector {
  const trimmed = text.trim();
  if (trimmed === '') return { requirements: [], text: '' };
  return { requirements: splitRequirements(trimmed).map((p) => parseRequirement(text, p)), text: trimmed };
}

/** Whether `labels` satisfy every requirement (an empty selector matches everything). */
export function matchesLabels(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return true;
  for (const r of selector.requirements) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const value = has ? (labels as Record<string, string>)[r.key] : undefined;
    switch (r.operator) {
      case 'exists':
        if (!has) return false;
        break;
      case '!exists':
        if (has) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(value as string)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(value as string)) return false;
        break;
    }
  }
  return true;
}
