/** Stops the database global-setup.ts started and removes its temp data dir. */
import { rm } from 'node:fs/promises';
// Type-only: jest loads this file as CommonJS, where our `.js` specifiers do not resolve.
import type { TestDatabaseHandle } from './global-setup.js';

export default async function globalTeardown(): Promise<void> {
  const store = globalThis as Record<symbol, unknown>;
  const key = Symbol.for('merge-queue.test-database');
  const handle = store[key] as TestDatabaseHandle | undefined;
  if (!handle) return;
  delete store[key];
  await handle.database.stop();
  await rm(handle.dataDir, { recursive: true, force: true });
}
