// Corefile text to the Directive a plugin's setup reads, and the check that a setup rejects it
// with exactly the message a user would see.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { CorefileError, type Directive } from '../../src/lib/corefile/ast.js';
import { parseCorefile } from '../../src/lib/corefile/parser.js';

/** The first directive of the first server block of `corefile`, read as the file "Corefile". */
export function firstDirective(corefile: string): Directive {
  return parseCorefile(corefile, { file: 'Corefile', baseDir: tmpdir() })[0]?.directives[0] as Directive;
}

/** `body` as the first directive of a server block keyed `key`: its first line is Corefile line 2. */
export function directiveIn(body: string, key = '.'): Directive {
  return firstDirective(`${key} {\n${body}\n}\n`);
}

/** Asserts that `run` throws a CorefileError whose message is exactly `message`. */
export function assertCorefileError(run: () => unknown, message: string): void {
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof CorefileError, String(e));
    assert.equal(e.message, message);
    return true;
  });
}
