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

/**
 * Below Linux's ephemeral range (32768–60999 by default): a port the kernel never hands out to a
 * client's connection, so a port found free stays free while parallel tests open thousands of
 * connections. Spread by pid so parallel test processes rarely try the same ones.
 */
const TEST_PORTS = { first: 20000, count: 12000 };
let nextTestPort = TEST_PORTS.first + ((process.pid * 7919) % TEST_PORTS.count);

function udpFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    sock.once('error', () => resolve(false));
    sock.bind(port, host, () => sock.close(() => resolve(true)));
  });
}

/** A port free for both UDP and TCP on `host` (DNS needs the same number for both). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = nextTestPort;
    nextTestPort = TEST_PORTS.first + ((nextTestPort - TEST_PORTS.first + 1) % TEST_PORTS.count);
    if ((await udpFree(port, host)) && (await tcpFree(port, host))) return port;
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
