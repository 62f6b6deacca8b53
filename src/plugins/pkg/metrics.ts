// What every plugin's metric families share with CoreDNS's: the value of the `server` label
// (which server block counted) and the buckets of duration histograms, so dashboards built on
// CoreDNS read kdns's series unchanged. Used by the prometheus, cache, acl, template, autopath
// and forward plugins.

/** 0.25 ms doubling up to ~8 s: CoreDNS's plugin.TimeBuckets. */
export const DURATION_BUCKETS: readonly number[] = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);

/** `dns://:53` for a block on every address, `dns://127.0.0.1:53` / `dns://[::1]:53` with bind. */
export function serverLabel(address: string, port: number): string {
  const host = address === '' ? '' : address.includes(':') ? `[${address}]` : address;
  return `dns://${host}:${port}`;
}
