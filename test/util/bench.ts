// Timing for the micro-benchmarks beside the plugins (not tests): CPU time per query over a
// ring of pre-built packets, so a run is not skewed by the moments another process held the core.

/**
 * Runs `body` on `packets` (a power-of-two count, taken in order round the ring) `total` times
 * after a 200,000-call JIT warm-up, prints `label` with the CPU ns per call (and how many calls
 * returned something falsy, when any did), and returns that figure.
 */
export function cpuNsPerQuery(label: string, packets: readonly Buffer[], total: number, body: (raw: Buffer) => unknown, labelWidth = 44): number {
  const mask = packets.length - 1;
  if (packets.length === 0 || (packets.length & mask) !== 0) throw new Error(`packet count ${packets.length} is not a power of two`);
  for (let i = 0; i < 200_000; i++) body(packets[i & mask] as Buffer);
  const start = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < total; i++) if (body(packets[i & mask] as Buffer)) sink++;
  const used = process.cpuUsage(start);
  const ns = ((used.user + used.system) * 1000) / total;
  console.log(`${label.padEnd(labelWidth)} ${ns.toFixed(0).padStart(5)} ns/query${sink === total ? '' : ` (${sink} answered)`}`);
  return ns;
}

/** Like cpuNsPerQuery for a call that takes no packet: CPU ns per call of `fn` after a warm-up of n/10. */
export function cpuNsPerCall(label: string, n: number, fn: () => void, labelWidth = 34): number {
  for (let i = 0; i < n / 10; i++) fn();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(start);
  const ns = ((used.user + used.system) * 1000) / n;
  console.log(`${label.padEnd(labelWidth)} ${ns.toFixed(1)} ns/query`);
  return ns;
}
