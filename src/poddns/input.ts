// Reading the objects `kdns resolvconf|validate|explain` are given: YAML or JSON, several
// documents, `kind: List`. src/lib/cluster/manifesttext.ts keeps only the kinds the DNS server reads
// (it drops Deployments and the other workload kinds), so pod-bearing objects are read here,
// with the same YAML reader (src/lib/cluster/yaml.ts).

import { yamlDocuments, yamlValue } from '../lib/cluster/yaml.js';

export interface InputObject {
  object: Record<string, unknown>;
  file: string;
  /** 1-based line where the object starts. */
  line: number;
}

export interface InputResult {
  objects: InputObject[];
  /** `file:line: message`, ready to print. */
  errors: string[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses one file's text; `file` names it in errors ("-" or "<stdin>" for standard input). */
export function parseInputObjects(text: string, file: string): InputResult {
  const result: InputResult = { objects: [], errors: [] };
  for (const document of yamlDocuments(text)) {
    if (document.error) {
      result.errors.push(`${file}:${document.error.line}: ${document.error.message}`);
      continue;
    }
    const value = yamlValue(document);
    if (value === null || value === undefined) continue;
    collect(value, file, document.line, result);
  }
  return result;
}

function collect(value: unknown, file: string, line: number, out: InputResult): void {
  if (!isRecord(value)) {
    out.errors.push(`${file}:${line}: expected a Kubernetes object (a mapping with apiVersion and kind)`);
    return;
  }
  const kind = value['kind'];
  if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(value['items'])) {
    // Typed lists (`PodList`) from the API leave kind off their items.
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    for (const item of value['items'] as unknown[]) {
      if (isRecord(item) && itemKind !== undefined && item['kind'] === undefined) item['kind'] = itemKind;
      collect(item, file, line, out);
    }
    return;
  }
  if (typeof kind !== 'string' || kind === '') {
    out.errors.push(`${file}:${line}: kind: Required value: every object needs a kind`);
    return;
  }
  out.objects.push({ object: value, file, line });
}
