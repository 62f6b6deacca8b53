// The kdns command from this build of the sources: bin/kdns runs dist/, so tests that spawn the
// CLI run this file instead (under tsx from src/, as plain JavaScript from dist/) and never an
// older build.
import { main } from '../cli/main.js';

await main(process.argv);
