// Field errors in the Kubernetes API server's shape (k8s.io/apimachinery field.ErrorList), so
// `kdns validate` prints what `kubectl apply` would: `spec.dnsConfig.searches[0]: Invalid value: "a_b": …`.

export type ErrorReason = 'Invalid value' | 'Required value' | 'Unsupported value' | 'Too many' | 'Forbidden' | 'Duplicate value' | 'Too long';

export interface FieldError {
  /** Dotted path with indices: `spec.template.spec.dnsConfig.searches[0]`. */
  field: string;
  reason: ErrorReason;
  /** The offending value, when the reason shows one (Invalid, Unsupported, Duplicate). */
  value?: unknown;
  detail: string;
}

/** Builds field paths the way the API server prints them. */
export class FieldPath {
  private constructor(private readonly parts: string[]) {}

  static root(...names: string[]): FieldPath {
    return new FieldPath([...names]);
  }

  child(...names: string[]): FieldPath {
    return new FieldPath([...this.parts, ...names]);
  }

  index(i: number): FieldPath {
    const parts = [...this.parts];
    parts[parts.length - 1] = `${parts[parts.length - 1] ?? ''}[${i}]`;
    return new FieldPath(parts);
  }

  key(k: string): FieldPath {
    const parts = [...this.parts];
    parts[parts.length - 1] = `${parts[parts.length - 1] ?? ''}[${k}]`;
    return new FieldPath(parts);
  }

  toString(): string {
    return this.parts.join('.');
  }
}

export const invalid = (path: FieldPath, value: unknown, detail: string): FieldError => ({ field: path.toString(), reason: 'Invalid value', value, detail });
export const required = (path: FieldPath, detail = ''): FieldError => ({ field: path.toString(), reason: 'Required value', detail });
export const forbidden = (path: FieldPath, detail: string): FieldError => ({ field: path.toString(), reason: 'Forbidden', detail });
export const tooMany = (path: FieldPath, actual: number, max: number): FieldError => ({
  field: path.toString(),
  reason: 'Too many',
  value: actual,
  detail: `must have at most ${max} items`,
});
export const duplicate = (path: FieldPath, value: unknown): FieldError => ({ field: path.toString(), reason: 'Duplicate value', value, detail: '' });
export const unsupported = (path: FieldPath, value: unknown, valid: readonly string[]): FieldError => ({
  field: path.toString(),
  reason: 'Unsupported value',
  value,
  detail: `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}`,
});

/** Renders one error as the API server does: `field: Reason: "value": detail`. */
export function formatFieldError(e: FieldError): string {
  const shown = e.value === undefined ? '' : ` ${typeof e.value === 'string' ? JSON.stringify(e.value) : String(e.value)}`;
  if (e.reason === 'Invalid value' || e.reason === 'Unsupported value' || e.reason === 'Duplicate value') {
    return `${e.field}: ${e.reason}:${shown}${e.detail ? `: ${e.detail}` : ''}`;
  }
  if (e.reason === 'Too many') {
    return `${e.field}: ${e.reason}:${shown}: ${e.detail}`;
  }
  return `${e.field}: ${e.reason}${e.detail ? `: ${e.detail}` : ''}`;
}
