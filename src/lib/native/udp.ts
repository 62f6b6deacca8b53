// The loader of kdns's own UDP socket (udp.c beside this file, built into build/kdns_udp.node by
// `npm install`, scripts/build-native.mjs): datagrams in batches through memory shared with the
// addon. The listeners (src/server/nativeudp.ts) and the upstream client (src/lib/dnsclient) both
// use it, so it lives here, under neither.

import { createRequire } from 'node:module';

export interface NativeSocket {
  readonly port: number;
}

export interface NativeUdp {
  readonly BATCH: number;
  readonly SLOT: number;
  readonly META: number;
  open(family: 4 | 6, address: string, port: number, rx: Buffer, meta: Buffer, tx: Buffer, txmeta: Buffer, onBatch: (count: number) => void): NativeSocket;
  flush(socket: NativeSocket, count: number): number;
  sendTo(socket: NativeSocket, bytes: Buffer, address: Buffer): number;
  /** Datagram i in slots at i * SLOT, its length and address in meta record i; 0 or the first errno. */
  sendBatch(socket: NativeSocket, slots: Buffer, meta: Buffer, count: number): number;
  /** Connects the socket (its peer becomes the only one it hears); 0 or the errno. */
  connect(socket: NativeSocket, address: string, port: number): number;
  /** 1 when a datagram waits to be read, 0 when none does, or minus the errno (a pending socket error, for one). */
  waiting(socket: NativeSocket): number;
  /** Asks for a receive buffer of `bytes` (as the kernel counts it); returns the size it has now. */
  setReceiveBuffer(socket: NativeSocket, bytes: number): number;
  close(socket: NativeSocket): void;
  /** Serves a UDP descriptor this process was handed, opened (see bindListener, openListener); throws EINVAL for anything else. */
  adopt(fd: number, rx: Buffer, meta: Buffer, tx: Buffer, txmeta: Buffer, onBatch: (count: number) => void): NativeSocket;
  /**
   * A socket with SO_REUSEPORT, dual-stack for IPv6, held by this process without reading, for
   * a child process to serve: TCP bound, UDP not yet (binding is what puts a UDP socket in the
   * address's group). It takes no queries until opened (openListener; a TCP socket also when the
   * child listens on it), so a shared address's queries do not wait in it meanwhile.
   * `freebind`: the address need not exist yet. Throws with code EADDRINUSE, EACCES,
   * EADDRNOTAVAIL or ESYSCALL.
   */
  bindListener(kind: 'udp' | 'tcp', family: 4 | 6, address: string, port: number, freebind: boolean): number;
  /** Closes a descriptor bindListener returned. */
  closeDescriptor(fd: number): void;
  /**
   * Lets a socket from bindListener take queries (UDP: bind to address:port unless a previous
   * child did; TCP: listen); 0 or the errno.
   */
  openListener(fd: number, address: string, port: number): number;
  /**
   * Sets the program of the SO_REUSEPORT group the listening TCP socket `fd` belongs to: each
   * new connection goes to the group's socket at index `skip` + a random number below `spread`
   * (an index the group lacks: the kernel's own pick). 0 or the errno.
   */
  steerReusePort(fd: number, skip: number, spread: number): number;
  /** Removes the program of fd's SO_REUSEPORT group; 0 or the errno (ENOENT: none was set). */
  clearReusePortSteering(fd: number): number;
  /** Connections waiting in the listening TCP socket fd's accept queue, or minus the errno. */
  acceptQueue(fd: number): number;
}

let loaded: NativeUdp | null | undefined;

/** The addon, or null when it is not built or KDNS_UDP=dgram asks for node:dgram. */
export function nativeUdp(): NativeUdp | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.env.KDNS_UDP === 'dgram' || process.platform !== 'linux') return loaded;
  try {
    const require = createRequire(import.meta.url);
    const addon = require('../../../build/kdns_udp.node') as Partial<NativeUdp>;
    // A build from an older kdns (before sendBatch/setReceiveBuffer/adopt/bindListener/steerReusePort/waiting): dgram rather than a missing function.
    const complete = (['sendBatch', 'setReceiveBuffer', 'adopt', 'openListener', 'steerReusePort', 'clearReusePortSteering', 'acceptQueue', 'waiting'] as const).every((f) => typeof addon[f] === 'function');
    loaded = complete ? (addon as NativeUdp) : null;
  } catch {
    loaded = null;
  }
  return loaded;
}
