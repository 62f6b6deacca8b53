import { networkInterfaces } from 'node:os';
import type { SetupFn } from '../../server/plugin.js';
import { mergeAddresses, parseBind } from '../pkg/bindaddresses.js';
import { BindPlugin } from './handler.js';

export const setup: SetupFn = (ctx) => {
  const addresses = parseBind(ctx.directive, networkInterfaces());
  const settings = ctx.block.settings;
  settings.listenAddresses = mergeAddresses(settings.listenAddresses, addresses);
  return new BindPlugin(addresses);
};
