// A validator for the subset of OpenAPI v3 structural schemas that CRDs use: type, properties,
// required, additionalProperties, items, enum, pattern, min/maxLength, min/maxItems,
// minimum/maximum, x-kubernetes-list-type (set, map) and x-kubernetes-validations.
//
// The DNS resource's validation is written once as such a schema (./dnsschema.ts); the CRD in
// deploy/ is generated from it, and this validator checks values against it, so what the API
// server enforces and what `kdns validate` reports cannot drift apart. CEL rules are not
// interpreted: each rule text the schema uses has an implementation in a registry, and a
// rule without one is a programming error, not a silent pass.

import { FieldPath, duplicate, forbidden, invalid, required, tooMany, unsupported } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';

export interface CelValidation {
  rule: string;
  message: string;
}

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean' | 'number';
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
  items?: Schema;
  enum?: readonly string[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: CelValidation[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/**
 * The JavaScript meaning of one CEL rule: returns the errors for `self` at `path` (empty when
 * the rule holds). Returning errors rather than a boolean lets a rule about a list point at the
 * offending item, as kdns's users deserve, while the API server only names the list.
 */
export type CelImplementation = (self: unknown, path: FieldPath) => FieldError[];

/** What the schema text alone cannot say: the meaning of its CEL rules, and friendly words for its patterns. */
export interface SchemaRules {
  cel: ReadonlyMap<string, CelImplementation>;
  /** Pattern → what a user should be told ("must be an IPv4 or IPv6 address…") instead of the regex. */
  patternMessages?: ReadonlyMap<string, string>;
}

/** Validates `value` against `schema`; errors carry paths built from `path`. */
export function validateSchema(schema: Schema, value: unknown, path: FieldPath, rules: SchemaRules): FieldError[] {
  const typeError = checkType(schema, value, path);
  if (typeError) return [typeError];
  const errors: FieldError[] = [];
  if (typeof value === 'string') errors.push(...checkString(schema, value, path, rules));
  if (typeof value === 'number') errors.push(...checkNumber(schema, value, path));
  if (Array.isArray(value)) errors.push(...checkArray(schema, value, path, rules));
  else if (isRecord(value)) errors.push(...checkObject(schema, value, path, rules));
  // Rules run even when something inside is malformed, so one typo does not hide a duplicate
  // elsewhere; their implementations skip the items they cannot read.
  for (const v of schema['x-kubernetes-validations'] ?? []) {
    const impl = rules.cel.get(v.rule);
    if (!impl) throw new Error(`no implementation registered for CEL rule ${JSON.stringify(v.rule)}`);
    errors.push(...impl(value, path));
  }
  return errors;
}

function checkType(schema: Schema, value: unknown, path: FieldPath): FieldError | undefined {
  const want = schema.type;
  if (want === undefined) return undefined;
  const ok =
    (want === 'object' && isRecord(value)) ||
    (want === 'array' && Array.isArray(value)) ||
    (want === 'string' && typeof value === 'string') ||
    (want === 'boolean' && typeof value === 'boolean') ||
    (want === 'integer' && typeof value === 'number' && Number.isInteger(value)) ||
    (want === 'number' && typeof value === 'number' && Number.isFinite(value));
  if (ok) return undefined;
  return invalid(path, describeValue(value), `must be ${want === 'object' || want === 'integer' || want === 'array' ? 'an' : 'a'} ${want}`);
}

function checkString(schema: Schema, value: string, path: FieldPath, rules: SchemaRules): FieldError[] {
  if (schema.enum && !schema.enum.includes(value)) return [unsupported(path, value, schema.enum)];
  const errors: FieldError[] = [];
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    errors.push({ field: path.toString(), reason: 'Too long', value, detail: `may not be longer than ${schema.maxLength}` });
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    errors.push(invalid(path, value, `must be at least ${schema.minLength} characters long`));
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
    errors.push(invalid(path, value, rules.patternMessages?.get(schema.pattern) ?? `should match '${schema.pattern}'`));
  }
  return errors;
}

function checkNumber(schema: Schema, value: number, path: FieldPath): FieldError[] {
  if (schema.minimum !== undefined && value < schema.minimum) return [invalid(path, value, `must be greater than or equal to ${schema.minimum}`)];
  if (schema.maximum !== undefined && value > schema.maximum) return [invalid(path, value, `must be less than or equal to ${schema.maximum}`)];
  return [];
}

function checkArray(schema: Schema, value: unknown[], path: FieldPath, rules: SchemaRules): FieldError[] {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) return [tooMany(path, value.length, schema.maxItems)];
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    return [schema.minItems === 1 && value.length === 0 ? required(path, 'must have at least one item') : invalid(path, value.length, `must have at least ${schema.minItems} items`)];
  }
  const errors: FieldError[] = [];
  value.forEach((item, i) => {
    if (schema.items) errors.push(...validateSchema(schema.items, item, path.index(i), rules));
  });
  errors.push(...checkListType(schema, value, path));
  return errors;
}

/** `set`: items unique; `map`: the key fields unique (the API server's duplicate checks). */
function checkListType(schema: Schema, value: unknown[], path: FieldPath): FieldError[] {
  const listType = schema['x-kubernetes-list-type'];
  if (listType !== 'set' && listType !== 'map') return [];
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  value.forEach((item, i) => {
    const key = listType === 'set' ? JSON.stringify(item) : JSON.stringify(keys.map((k) => (isRecord(item) ? item[k] : undefined)));
    if (seen.has(key)) {
      const shown = listType === 'set' ? item : keys.length === 1 && isRecord(item) ? item[keys[0]!] : key;
      const at = listType === 'map' && keys.length === 1 ? path.index(i).child(keys[0]!) : path.index(i);
      errors.push(duplicate(at, shown));
    }
    seen.add(key);
  });
  return errors;
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: FieldPath, rules: SchemaRules): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of schema.required ?? []) {
    if (value[name] === undefined || value[name] === null) errors.push(required(path.child(name)));
  }
  for (const [name, child] of Object.entries(value)) {
    if (child === undefined) continue;
    const prop = schema.properties && Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (prop) {
      // null stands for "unset" in YAML written by hand (`tolerations:` with nothing after it).
      if (child !== null) errors.push(...validateSchema(prop, child, path.child(name), rules));
    } else if (schema.additionalProperties) {
      errors.push(...validateSchema(schema.additionalProperties, child, path.key(name), rules));
    } else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.properties) {
      // The API server would prune it with a warning; in a file it is almost always a typo.
      errors.push(forbidden(path.child(name), 'unknown field'));
    }
  }
  return errors;
}

function describeValue(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return value;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
