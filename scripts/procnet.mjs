// The kernel's view of this network namespace's UDP sockets (/proc/net/udp and udp6), shared by
// the load scripts: per socket its local port, the datagrams it dropped (buffer full) and what
// waits in its receive queue.
import { readFileSync } from 'node:fs';

/** inode → { port, drops, rxQueue } of every UDP socket in this network namespace. */
export function udpSockets() {
  const out = new Map();
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 13) continue;
      out.set(f[9], { port: parseInt(f[1].split(':')[1], 16), drops: Number(f[f.length - 1]), rxQueue: parseInt(f[4].split(':')[1], 16) });
    }
  }
  return out;
}
