/**
 * The service: configuration → database → HTTP server. Wiring only; every
 * decision lives in the modules it connects.
 */
import { openDatabase, type OpenDatabase } from './database.js';
import { buildServer } from './api/build-server.js';
import { loadConfig } from './config/env.js';
import { createLogger } from './logger.js';
import { gitHostRegistry } from './ports/git-host.js';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(loaded.message);
  process.exit(1);
}
const config = loaded.config;
const log = createLogger(config);

let database: OpenDatabase;
try {
  database = await openDatabase(config, { info: (m) => log.info(m), warn: (m) => log.warn(m) });
} catch (error) {
  log.fatal({ err: error }, 'no database');
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
log.info({ source: database.source }, 'database ready');

// Repository hosts (sandbox, GitHub) arrive with the next issues; until then
// submitted pull requests wait in NOT_READY with mergeability "unspecified".
const gitHosts = gitHostRegistry({});
log.info('no repository host is configured: submitted pull requests stay NOT_READY');

const app = await buildServer({ stores: database.stores, gitHosts, logger: log });
await app.listen({ port: config.PORT, host: config.HOST });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  // A stuck close must not keep a terminating pod alive forever.
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  try {
    await app.close();
    await database.close();
    process.exit(0);
  } catch (error) {
    log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
