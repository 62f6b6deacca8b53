// node:http, loaded with require() instead of an ES module import.
//
// Why: on Node 26 an ES module import of node:http, default or named, builds the module's
// namespace, and that reads every one of its lazy exports; a few of them load undici (fetch,
// WebSocket) and the web streams. That is 90 modules more, about 2.4 MiB of V8 heap and 7 MiB of
// RSS in every kdns process, for code kdns never runs (measured: docs/memory.md). require()
// returns the same module and leaves those exports lazy. Types come from `import type`, which
// costs nothing at run time.
import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
