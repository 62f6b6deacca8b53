#!/usr/bin/env node
// Builds src/lib/native/udp.c into build/kdns_udp.node: the batched UDP socket kdns serves UDP
// with when it is there (see src/server/nativeudp.ts). Run by `npm install`. Then
// src/lib/native/memory.c into build/kdns_memory.node, with which a running kdns hands back
// pages it no longer uses (src/lib/native/memory.ts); without it kdns holds more, no less works.
//
// It is optional: without a C compiler or Node's headers kdns falls back to node:dgram, so
// the build failing only prints why and exits 0 — unless KDNS_NATIVE=required (CI sets it),
// where a missing native socket is an error. Compiled with the plain C compiler rather than
// node-gyp: one file, no Python, and N-API symbols resolve against the running node.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src/lib/native/udp.c');
const output = join(root, 'build/kdns_udp.node');
const memorySource = join(root, 'src/lib/native/memory.c');
const memoryOutput = join(root, 'build/kdns_memory.node');
const required = process.env.KDNS_NATIVE === 'required';

function headerDirs() {
  const candidates = [
    process.env.KDNS_NODE_INCLUDE,
    join(dirname(process.execPath), '..', 'include', 'node'),
    process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include', 'node'),
  ];
  return candidates.filter((d) => d && existsSync(join(d, 'node_api.h')) && existsSync(join(d, 'uv.h')));
}

function giveUp(reason) {
  const msg = `kdns: native UDP socket not built (${reason}); kdns will serve UDP through node:dgram, which costs about 3 µs more per query.`;
  if (required) {
    console.error(`${msg}\nKDNS_NATIVE=required: failing.`);
    process.exit(1);
  }
  console.warn(msg);
  process.exit(0);
}

if (process.platform !== 'linux') giveUp(`recvmmsg/sendmmsg are Linux-only, this is ${process.platform}`);
const [include] = headerDirs();
if (!include) giveUp("Node's C headers (node_api.h, uv.h) not found; set KDNS_NODE_INCLUDE to their folder");
const cc = process.env.CC || 'cc';
mkdirSync(dirname(output), { recursive: true });

/** Compiles one C file into an addon; the compiler's first line of error when it fails. */
function compile(from, to) {
  const tmp = `${to}.tmp`;
  try {
    execFileSync(cc, ['-O2', '-Wall', '-Wextra', '-Wno-unused-parameter', '-fPIC', '-shared', '-std=gnu11', '-DNAPI_VERSION=8', `-I${include}`, from, '-o', tmp], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (e) {
    return `${cc} failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`;
  }
  renameSync(tmp, to); // atomic: a running kdns never loads a half-written file
  console.log(`kdns: built ${to}`);
  return undefined;
}

const failed = compile(source, output);
if (failed) giveUp(failed);
const memoryFailed = compile(memorySource, memoryOutput);
if (memoryFailed) {
  console.warn(`kdns: native memory module not built (${memoryFailed}); kdns will keep the pages it no longer uses mapped.`);
  if (required) process.exit(1);
}
