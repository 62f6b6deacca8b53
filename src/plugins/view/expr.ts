// The expressions of `view … { expr EXPRESSION }`: the part of the expr-lang language (the one
// CoreDNS's view uses) that view expressions are written in, parsed once at setup into a tree
// and evaluated per query by walking it. Nothing is handed to JavaScript's eval or Function.
//
// Supported: string ('…' or "…"), integer, float, true/false/nil literals and arrays [a, b];
// calls of the functions view offers (FUNCTIONS below); `!`/`not`, unary `-`; `* / %`, `+ -`;
// `== != < <= > >=`, `in`, `not in`, `matches`, `contains`, `startsWith`, `endsWith` (and their
// `not` forms); `&&`/`and`, `||`/`or`; parentheses. Precedence is expr-lang's. Each operand's type is
// checked at setup where it is known, so `type() == 1` or `incidr(client_ip())` fail with the
// line; what can only fail on a query's data (an address that is not one) makes the view not
// match, as in CoreDNS.

import { compileGoRegExp } from '../pkg/goregexp.js';

export type Value = string | number | boolean | null | Value[];

/** What a query offers to expressions: one function per name CoreDNS's view documents. */
export interface QueryFacts {
  bufsize(): number;
  class(): string;
  client_ip(): string;
  do(): boolean;
  id(): number;
  name(): string;
  opcode(): number;
  port(): string;
  proto(): string;
  server_ip(): string;
  server_port(): string;
  size(): number;
  type(): string;
}

type Type = 'string' | 'int' | 'float' | 'bool' | 'array' | 'nil' | 'any';

interface FunctionSpec {
  args: readonly Type[];
  returns: Type;
}

/** The functions of CoreDNS's view README, with the types expr-lang checks them against. */
const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map<string, FunctionSpec>([
  ['bufsize', { args: [], returns: 'int' }],
  ['class', { args: [], returns: 'string' }],
  ['client_ip', { args: [], returns: 'string' }],
  ['do', { args: [], returns: 'bool' }],
  ['id', { args: [], returns: 'int' }],
  ['name', { args: [], returns: 'string' }],
  ['opcode', { args: [], returns: 'int' }],
  ['port', { args: [], returns: 'string' }],
  ['proto', { args: [], returns: 'string' }],
  ['server_ip', { args: [], returns: 'string' }],
  ['server_port', { args: [], returns: 'string' }],
  ['size', { args: [], returns: 'int' }],
  ['type', { args: [], returns: 'string' }],
  ['incidr', { args: ['string', 'string'], returns: 'bool' }],
]);

/** Tests an address against a CIDR; throws when either is not one (the view then does not match). */
export type CidrTest = (ip: string, cidr: string) => boolean;

export type Node =
  | { kind: 'literal'; value: Value; type: Type }
  | { kind: 'array'; items: Node[] }
  | { kind: 'call'; name: string; args: Node[]; type: Type }
  | { kind: 'unary'; op: '!' | '-'; operand: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node; regex?: RegExp };

export class ExprError extends Error {}

// ---- tokens ------------------------------------------------------------------------------

type Token = { kind: 'string'; value: string; at: number } | { kind: 'number'; value: number; float: boolean; at: number } | { kind: 'ident'; value: string; at: number } | { kind: 'op'; value: string; at: number };

const OPERATORS = ['||', '&&', '==', '!=', '<=', '>=', '<', '>', '!', '(', ')', '[', ']', ',', '+', '-', '*', '/', '%'];
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' };

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const start = i++;
      let value = '';
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\') {
          const e = ESCAPES[text[i + 1] ?? ''];
          if (e === undefined) throw new ExprError(`unknown escape \\${text[i + 1] ?? ''} in the string at column ${i + 1}`);
          value += e;
          i += 2;
        } else value += text[i++];
      }
      if (i >= text.length) throw new ExprError(`string at column ${start + 1} is not closed`);
      i++;
      out.push({ kind: 'string', value, at: start });
      continue;
    }
    const num = /^(?:\d+\.\d+|\d+)/.exec(text.slice(i));
    if (num) {
      out.push({ kind: 'number', value: Number(num[0]), float: num[0].includes('.'), at: i });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (ident) {
      out.push({ kind: 'ident', value: ident[0], at: i });
      i += ident[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) throw new ExprError(`unexpected "${c}" at column ${i + 1}`);
    out.push({ kind: 'op', value: op, at: i });
    i += op.length;
  }
  return out;
}

// ---- parsing -----------------------------------------------------------------------------

/** Binary operators by precedence, as expr-lang ranks them. */
const BINARY: ReadonlyMap<string, number> = new Map([
  ['||', 10],
  ['or', 10],
  ['&&', 15],
  ['and', 15],
  ['==', 20],
  ['!=', 20],
  ['<', 20],
  ['>', 20],
  ['<=', 20],
  ['>=', 20],
  ['in', 20],
  ['matches', 20],
  ['contains', 20],
  ['startsWith', 20],
  ['endsWith', 20],
  ['+', 30],
  ['-', 30],
  ['*', 60],
  ['/', 60],
  ['%', 60],
]);
const UNARY_NOT = 50;
const UNARY_MINUS = 90;
/** Operators `not` may stand in front of (`a not in b`). */
const NEGATABLE: ReadonlySet<string> = new Set(['in', 'matches', 'contains', 'startsWith', 'endsWith']);

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.i + offset];
  }

  private describe(t: Token | undefined): string {
    if (!t) return 'the end of the expression';
    return `"${t.kind === 'string' ? `'${t.value}'` : String(t.value)}" at column ${t.at + 1}`;
  }

  private expectOp(op: string): void {
    const t = this.peek();
    if (t?.kind !== 'op' || t.value !== op) throw new ExprError(`expected "${op}", found ${this.describe(t)}`);
    this.i++;
  }

  parseAll(): Node {
    const node = this.parse(0);
    if (this.peek()) throw new ExprError(`unexpected ${this.describe(this.peek())}`);
    return node;
  }

  /** The binary operator at the cursor (with a leading `not`), if its precedence is at least `min`. */
  private binaryAhead(min: number): { op: string; negated: boolean; width: number } | undefined {
    const t = this.peek();
    if (!t || (t.kind !== 'op' && t.kind !== 'ident')) return undefined;
    if (t.kind === 'ident' && t.value === 'not') {
      const n = this.peek(1);
      if (n?.kind === 'ident' && NEGATABLE.has(n.value) && (BINARY.get(n.value) as number) >= min) return { op: n.value, negated: true, width: 2 };
      return undefined;
    }
    const p = BINARY.get(t.value);
    if (p === undefined || p < min) return undefined;
    return { op: t.value, negated: false, width: 1 };
  }

  private parse(min: number): Node {
    let left = this.unary();
    for (;;) {
      const ahead = this.binaryAhead(min);
      if (!ahead) return left;
      this.i += ahead.width;
      const right = this.parse((BINARY.get(ahead.op) as number) + 1);
      const op = ahead.op === 'or' ? '||' : ahead.op === 'and' ? '&&' : ahead.op;
      const node: Node = { kind: 'binary', op, left, right };
      left = ahead.negated ? { kind: 'unary', op: '!', operand: node } : node;
    }
  }

  private unary(): Node {
    const t = this.peek();
    if ((t?.kind === 'op' && t.value === '!') || (t?.kind === 'ident' && t.value === 'not')) {
      this.i++;
      return { kind: 'unary', op: '!', operand: this.parse(UNARY_NOT) };
    }
    if (t?.kind === 'op' && t.value === '-') {
      this.i++;
      return { kind: 'unary', op: '-', operand: this.parse(UNARY_MINUS) };
    }
    if (t?.kind === 'op' && t.value === '+') {
      this.i++;
      return this.parse(UNARY_MINUS);
    }
    return this.primary();
  }

  private primary(): Node {
    const t = this.peek();
    if (!t) throw new ExprError('the expression ends too early');
    this.i++;
    if (t.kind === 'string') return { kind: 'literal', value: t.value, type: 'string' };
    if (t.kind === 'number') return { kind: 'literal', value: t.value, type: t.float ? 'float' : 'int' };
    if (t.kind === 'op' && t.value === '(') {
      const inner = this.parse(0);
      this.expectOp(')');
      return inner;
    }
    if (t.kind === 'op' && t.value === '[') {
      const items: Node[] = [];
      if (!(this.peek()?.kind === 'op' && this.peek()?.value === ']')) {
        for (;;) {
          items.push(this.parse(0));
          const n = this.peek();
          if (n?.kind === 'op' && n.value === ',') {
            this.i++;
            continue;
          }
          break;
        }
      }
      this.expectOp(']');
      return { kind: 'array', items };
    }
    if (t.kind === 'ident') {
      if (t.value === 'true' || t.value === 'false') return { kind: 'literal', value: t.value === 'true', type: 'bool' };
      if (t.value === 'nil') return { kind: 'literal', value: null, type: 'nil' };
      const n = this.peek();
      if (n?.kind === 'op' && n.value === '(') return this.call(t);
      throw new ExprError(`unknown name "${t.value}" at column ${t.at + 1} (view's values are functions: write ${t.value}())`);
    }
    throw new ExprError(`unexpected ${this.describe(t)}`);
  }

  private call(t: Token & { kind: 'ident' }): Node {
    this.expectOp('(');
    const args: Node[] = [];
    if (!(this.peek()?.kind === 'op' && this.peek()?.value === ')')) {
      for (;;) {
        args.push(this.parse(0));
        const n = this.peek();
        if (n?.kind === 'op' && n.value === ',') {
          this.i++;
          continue;
        }
        break;
      }
    }
    this.expectOp(')');
    if (t.value === 'metadata') {
      throw new ExprError("metadata() is not available in kdns's view expressions: kdns's plugins set metadata while they answer, after the view is chosen");
    }
    const spec = FUNCTIONS.get(t.value);
    if (!spec) throw new ExprError(`unknown function ${t.value}() at column ${t.at + 1} (view offers ${[...FUNCTIONS.keys()].map((f) => `${f}()`).join(', ')})`);
    if (args.length !== spec.args.length) throw new ExprError(`${t.value}() takes ${spec.args.length} argument${spec.args.length === 1 ? '' : 's'}, got ${args.length}`);
    args.forEach((a, k) => {
      const got = typeOf(a);
      if (got !== 'any' && got !== spec.args[k]) throw new ExprError(`argument ${k + 1} of ${t.value}() must be a ${spec.args[k]}, not a ${got}`);
    });
    return { kind: 'call', name: t.value, args, type: spec.returns };
  }
}

// ---- static types ------------------------------------------------------------------------

function isNumber(t: Type): boolean {
  return t === 'int' || t === 'float';
}

/** The type of a node where it is known at setup; 'any' where it depends on the query. */
function typeOf(node: Node): Type {
  switch (node.kind) {
    case 'literal':
    case 'call':
      return node.type;
    case 'array':
      return 'array';
    case 'unary':
      return node.op === '!' ? 'bool' : typeOf(node.operand);
    case 'binary': {
      const l = typeOf(node.left);
      const r = typeOf(node.right);
      if (node.op === '+' && l === 'string' && r === 'string') return 'string';
      if (['+', '-', '*', '%'].includes(node.op)) return l === 'float' || r === 'float' ? 'float' : l === 'any' || r === 'any' ? 'any' : 'int';
      if (node.op === '/') return 'float';
      return 'bool';
    }
  }
}

/** Refuses operands whose types expr-lang would refuse at compile time; compiles constant regexes. */
function check(node: Node): void {
  if (node.kind === 'array') node.items.forEach(check);
  if (node.kind === 'call') node.args.forEach(check);
  if (node.kind === 'unary') {
    check(node.operand);
    const t = typeOf(node.operand);
    if (node.op === '!' && t !== 'bool' && t !== 'any') throw new ExprError(`"!" needs a bool, not a ${t}`);
    if (node.op === '-' && !isNumber(t) && t !== 'any') throw new ExprError(`"-" needs a number, not a ${t}`);
  }
  if (node.kind !== 'binary') return;
  check(node.left);
  check(node.right);
  const l = typeOf(node.left);
  const r = typeOf(node.right);
  const known = l !== 'any' && r !== 'any';
  const mismatch = (): never => {
    throw new ExprError(`invalid operation: ${node.op} (mismatched types ${l} and ${r})`);
  };
  switch (node.op) {
    case '&&':
    case '||':
      if ((l !== 'bool' && l !== 'any') || (r !== 'bool' && r !== 'any')) mismatch();
      break;
    case '==':
    case '!=':
      if (known && l !== r && !(isNumber(l) && isNumber(r)) && l !== 'nil' && r !== 'nil') mismatch();
      break;
    case '<':
    case '>':
    case '<=':
    case '>=':
      if (known && !(isNumber(l) && isNumber(r)) && !(l === 'string' && r === 'string')) mismatch();
      break;
    case 'in':
      if (r !== 'array' && r !== 'any') mismatch();
      if (node.right.kind === 'array' && l !== 'any') {
        for (const item of node.right.items) {
          const t = typeOf(item);
          if (t !== 'any' && t !== l && !(isNumber(t) && isNumber(l))) mismatch();
        }
      }
      break;
    case 'matches':
      if ((l !== 'string' && l !== 'any') || (r !== 'string' && r !== 'any')) mismatch();
      if (node.right.kind === 'literal') {
        try {
          node.regex = compileGoRegExp(node.right.value as string).regex;
        } catch (e) {
          throw new ExprError(e instanceof Error ? e.message : String(e));
        }
      }
      break;
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      if ((l !== 'string' && l !== 'any') || (r !== 'string' && r !== 'any')) mismatch();
      break;
    case '+':
      if (known && !(isNumber(l) && isNumber(r)) && !(l === 'string' && r === 'string')) mismatch();
      break;
    default:
      if (known && !(isNumber(l) && isNumber(r))) mismatch();
  }
}

/** Parses and checks an expression; throws ExprError saying what is wrong. */
export function compileExpression(text: string): Node {
  const node = new Parser(tokenize(text)).parseAll();
  check(node);
  const t = typeOf(node);
  if (t !== 'bool' && t !== 'any') throw new ExprError(`the expression gives a ${t}, not a bool`);
  return node;
}

// ---- evaluation --------------------------------------------------------------------------

/** A failure on the query's data: the view does not match (CoreDNS's expr.Run error). */
class EvalError extends Error {}

function equal(a: Value, b: Value): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => equal(x, b[i] as Value));
  }
  return a === b;
}

function str(v: Value, op: string): string {
  if (typeof v !== 'string') throw new EvalError(`${op} needs strings`);
  return v;
}

function num(v: Value, op: string): number {
  if (typeof v !== 'number') throw new EvalError(`${op} needs numbers`);
  return v;
}

function evaluate(node: Node, facts: QueryFacts, incidr: CidrTest): Value {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'array':
      return node.items.map((n) => evaluate(n, facts, incidr));
    case 'call': {
      if (node.name === 'incidr') return incidr(str(evaluate(node.args[0] as Node, facts, incidr), 'incidr'), str(evaluate(node.args[1] as Node, facts, incidr), 'incidr'));
      return (facts[node.name as keyof QueryFacts] as () => Value).call(facts);
    }
    case 'unary': {
      const v = evaluate(node.operand, facts, incidr);
      if (node.op === '!') {
        if (typeof v !== 'boolean') throw new EvalError('! needs a bool');
        return !v;
      }
      return -num(v, '-');
    }
    case 'binary':
      return binary(node, facts, incidr);
  }
}

function binary(node: Node & { kind: 'binary' }, facts: QueryFacts, incidr: CidrTest): Value {
  const l = evaluate(node.left, facts, incidr);
  if (node.op === '&&' || node.op === '||') {
    if (typeof l !== 'boolean') throw new EvalError(`${node.op} needs bools`);
    if (node.op === '&&' ? !l : l) return l;
    const r = evaluate(node.right, facts, incidr);
    if (typeof r !== 'boolean') throw new EvalError(`${node.op} needs bools`);
    return r;
  }
  const r = evaluate(node.right, facts, incidr);
  switch (node.op) {
    case '==':
      return equal(l, r);
    case '!=':
      return !equal(l, r);
    case '<':
    case '>':
    case '<=':
    case '>=': {
      if (typeof l !== typeof r || (typeof l !== 'number' && typeof l !== 'string')) throw new EvalError(`${node.op} needs two numbers or two strings`);
      const a = l as number | string;
      const b = r as number | string;
      return node.op === '<' ? a < b : node.op === '>' ? a > b : node.op === '<=' ? a <= b : a >= b;
    }
    case 'in':
      if (!Array.isArray(r)) throw new EvalError('in needs an array');
      return r.some((x) => equal(l, x));
    case 'matches':
      return (node.regex ?? compileRuntime(str(r, 'matches'))).test(str(l, 'matches'));
    case 'contains':
      return str(l, 'contains').includes(str(r, 'contains'));
    case 'startsWith':
      return str(l, 'startsWith').startsWith(str(r, 'startsWith'));
    case 'endsWith':
      return str(l, 'endsWith').endsWith(str(r, 'endsWith'));
    case '+':
      if (typeof l === 'string' && typeof r === 'string') return l + r;
      return num(l, '+') + num(r, '+');
    case '-':
      return num(l, '-') - num(r, '-');
    case '*':
      return num(l, '*') * num(r, '*');
    case '/':
      return num(l, '/') / num(r, '/');
    case '%': {
      const d = num(r, '%');
      if (d === 0) throw new EvalError('% by zero');
      return num(l, '%') % d;
    }
    default:
      throw new EvalError(`unknown operator ${node.op}`);
  }
}

function compileRuntime(pattern: string): RegExp {
  try {
    return compileGoRegExp(pattern).regex;
  } catch (e) {
    throw new EvalError(e instanceof Error ? e.message : String(e));
  }
}

/** True only when the expression gives boolean true; anything else, or a failure on the query's data, is false (as CoreDNS). */
export function holds(node: Node, facts: QueryFacts, incidr: CidrTest): boolean {
  try {
    return evaluate(node, facts, incidr) === true;
  } catch (e) {
    if (e instanceof EvalError || e instanceof IncidrError) return false;
    throw e;
  }
}

/** What incidr throws for an argument that is not an address or a CIDR. */
export class IncidrError extends Error {}
