// Moved to testutil/upstream.ts (one named starter for every test). This re-export stays only
// for the autopath and nodecache tests that still import it from here; drop it once they import
// ../testutil/upstream.js themselves.
export { startNamed, zoneFile, type NamedServer } from '../testutil/upstream.js';
