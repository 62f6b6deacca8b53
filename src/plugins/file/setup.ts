import { blockProperties, expectArgs, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { Logger } from '../../server/log.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { parseFallthrough } from '../pkg/fallthrough.js';
import { parseReload } from '../pkg/filereload.js';
import { normalizeZones } from '../pkg/zones.js';
import { TransferHub } from '../pkg/xfr.js';
import { DEFAULT_RELOAD_MS, FilePlugin, type FileConfig } from './handler.js';

/** `file DBFILE [ZONES...] { reload DURATION  reload_by_mtime  fallthrough [ZONES...] }`. */
export function parseFile(d: Directive, blockZones: readonly string[], corefilePath: string): FileConfig {
  const [file, ...zoneArgs] = expectArgs(d, 1);
  const origins = zoneArgs.length > 0 ? zoneArgs.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const config: FileConfig = { path: corefileRelative(file as string, corefilePath), origins, reloadMs: DEFAULT_RELOAD_MS, reloadByMtime: false };
  for (const prop of blockProperties(d, 'file')) {
    switch (prop.name) {
      case 'reload':
        config.reloadMs = parseReload(prop);
        break;
      case 'reload_by_mtime':
        expectArgs(prop, 0, 0);
        config.reloadByMtime = true;
        break;
      case 'fallthrough':
        config.fallthrough = parseFallthrough(prop);
        break;
      case 'upstream':
        // Accepted and ignored, as CoreDNS does: CNAME targets outside the zone are always
        // resolved through the rest of the chain.
        break;
      default:
        unknownProperty(prop, 'file');
    }
  }
  return config;
}

/**
 * Reads every zone of the plugin now, so a broken file is a Corefile error naming the
 * directive's line and the file's. A missing file is only an error when nothing would read
 * it later (`reload 0`), as in CoreDNS; until it appears its zones answer SERVFAIL.
 */
export function loadAtSetup(plugin: FilePlugin, d: Directive, log: Logger): void {
  for (const source of plugin.sources.values()) {
    try {
      source.loadNow();
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ENOENT' && plugin.config.reloadMs > 0) {
        log.warn(`zone file ${source.path} does not exist: trying again every ${plugin.config.reloadMs / 1000}s`);
        continue;
      }
      throw CorefileError.at(d, `file: ${err.code === 'ENOENT' ? `zone file ${source.path} does not exist` : err.message}`);
    }
  }
}

export const setup: SetupFn = (ctx) => {
  const log = ctx.shared.log.plugin('file');
  const plugin = new FilePlugin(parseFile(ctx.directive, ctx.block.zones, ctx.corefilePath), log);
  loadAtSetup(plugin, ctx.directive, log);
  plugin.transfers = TransferHub.of(ctx.instance, ctx.block);
  plugin.transfers.offer(plugin);
  return plugin;
};
