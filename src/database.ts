import { join } from 'node:path';
import { openMongoStores } from './adapters/mongo/mongo-stores.js';
import type { Config } from './config/env.js';
import { findProjectRoot, type LocalDbLog } from './local-db/ferretdb-binary.js';
import { resolveDatabase, type DatabaseSource } from './local-db/resolve-database.js';
import type { Stores } from './ports/stores.js';

/** The stores on the database the configuration points to, and how to let go of both. */
export interface OpenDatabase {
  stores: Stores;
  source: DatabaseSource;
  close(): Promise<void>;
}

/**
 * Shared by the service and the `mq` CLI: both resolve the same local database
 * (a fixed loopback port and data directory), so a token minted by the CLI
 * works against the running service.
 */
export async function openDatabase(config: Config, log: LocalDbLog): Promise<OpenDatabase> {
  // Without MONGODB_URI the project root holds the FerretDB sources and .data/.
  const projectRoot = config.MONGODB_URI ? process.cwd() : await findProjectRoot();
  const database = await resolveDatabase({
    mongodbUri: config.MONGODB_URI,
    projectRoot,
    ferretDbAddress: `127.0.0.1:${config.MQ_LOCAL_DB_PORT}`,
    dataDir: config.MQ_DATA_DIR ?? join(projectRoot, '.data', 'ferretdb'),
    log,
  });
  try {
    const stores = await openMongoStores({ uri: database.uri, dbName: config.MONGODB_URI ? undefined : 'mergequeue' });
    return {
      stores,
      source: database.source,
      async close() {
        await stores.close();
        await database.stop();
      },
    };
  } catch (error) {
    await database.stop();
    throw error;
  }
}
