// The registry lists exactly the plugin folders there are, each under a directive of the plugin
// order, and each entry loads a setup: a plugin added without its registry line (or a line left
// behind by a removed one) fails here, not in a user's Corefile.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PLUGIN_ORDER } from '../server/order.js';
import { PLUGINS } from './registry.js';

const PLUGINS_DIR = fileURLToPath(new URL('./', import.meta.url));

test('every plugin folder has a registry entry, and every entry a folder', () => {
  const folders = readdirSync(PLUGINS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`${PLUGINS_DIR}${d.name}/setup.ts`))
    .map((d) => d.name)
    .sort();
  assert.deepEqual([...PLUGINS.keys()].sort(), folders);
  assert.equal(folders.length, 43);
});

test('every registered plugin is a directive of the plugin order', () => {
  assert.deepEqual([...PLUGINS.keys()].filter((name) => !PLUGIN_ORDER.includes(name)), []);
});

test('every entry loads a module with a setup function', async () => {
  const without: string[] = [];
  for (const [name, load] of PLUGINS) if (typeof (await load()).setup !== 'function') without.push(name);
  assert.deepEqual(without, []);
});
