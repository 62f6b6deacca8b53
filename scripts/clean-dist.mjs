#!/usr/bin/env node
// Empties dist/ before a build, so the package and the images carry what this build made and
// nothing a renamed or deleted source (or an older test build) left behind.
import { rmSync } from 'node:fs';
rmSync(new URL('../dist/', import.meta.url), { recursive: true, force: true });
