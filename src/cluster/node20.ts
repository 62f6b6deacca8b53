// @kubernetes/client-node 2 brings undici 8, which declares Node.js >= 22.19 and uses three
// built-ins Node 20 lacks: zlib's zstd decompressor and worker_threads'
// markAsUncloneable at load time, Promise.withResolvers per request. kdns targets Node 20, so
// this module fills them in (only when missing) before client-node is imported:
//   - zstd: the API server never sends zstd (it offers gzip), so a decompressor that says so is enough;
//   - markAsUncloneable only guards undici's Cache API objects against structuredClone, unused here.
import zlib from 'node:zlib';
import workerThreads from 'node:worker_threads';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const z = zlib as Mutable<typeof zlib> & { createZstdDecompress?: unknown };
if (typeof z.createZstdDecompress !== 'function') {
  z.createZstdDecompress = (): never => {
    throw new Error('zstd content encoding is not supported on this Node.js version');
  };
}

const wt = workerThreads as Mutable<typeof workerThreads> & { markAsUncloneable?: unknown };
if (typeof wt.markAsUncloneable !== 'function') wt.markAsUncloneable = (): void => {};

// undici 8 also calls Promise.withResolvers (ES2024, Node 22) per request: the standard
// behaviour, defined only where the runtime has none.
interface WithResolvers {
  withResolvers?: <T>() => { promise: Promise<T>; resolve: (v: T | PromiseLike<T>) => void; reject: (e?: unknown) => void };
}
const P = Promise as unknown as WithResolvers;
if (typeof P.withResolvers !== 'function') {
  P.withResolvers = <T>() => {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (e?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
