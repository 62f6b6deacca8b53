// The Corefile package: parse (with imports, snippets, env), server block keys, the helpers plugin
// setups read their directives with, and rendering Corefiles from data.

export * from './ast.js';
export { parseCorefile, MAX_IMPORTS, type ParseOptions } from './parser.js';
export { parseServerKey, keyPort } from './key.js';
export { checkDuplicateZones, bindAddresses, type ListenAddressesOf } from './duplicates.js';
export {
  parseDuration,
  formatDuration,
  parseIntArg,
  expectArgs,
  argPosition,
  unknownProperty,
  duplicateProperty,
  noBlockAllowed,
  blockProperties,
  invalidArg,
  type DurationOptions,
  type IntOptions,
} from './args.js';
export { renderCorefile, toRenderBlocks, quoteWord, type RenderBlock, type RenderDirective } from './render.js';
export type { Env } from './env.js';
