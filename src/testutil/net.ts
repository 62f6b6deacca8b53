// Test helpers for sockets on loopback.
import dgram from 'node:dgram';
import net from 'node:net';

function tcpFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A port free for both UDP and TCP on `host` (DNS needs the same number for both). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const port = await new Promise<number>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(0, host, () => resolve(sock.address().port));
    });
    await new Promise<void>((r) => sock.close(() => r()));
    if (await tcpFree(port, host)) return port;
  }
  throw new Error('no free port found');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value other than undefined/false, or throws after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(stepMs);
  }
}
