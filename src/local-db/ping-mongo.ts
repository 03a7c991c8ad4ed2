import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';

/**
 * True when a MongoDB-protocol server answers `ping` at a single-host URI, waiting
 * up to waitMs for one to come up. A plain TCP probe comes first, so a closed port
 * answers "no" at once instead of after the driver's server selection timeout.
 */
export async function pingMongo(uri: string, waitMs: number): Promise<boolean> {
  const { host, port } = hostAndPort(uri);
  const deadline = Date.now() + waitMs;
  while (!(await canConnect(host, port))) {
    if (Date.now() >= deadline) return false;
    await sleep(200);
  }
  const client = new MongoClient(uri, {
    directConnection: true,
    serverSelectionTimeoutMS: Math.max(1_500, deadline - Date.now()),
    connectTimeoutMS: 1_500,
  });
  try {
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => {});
  }
}

/** Only for the `mongodb://host:port/` URIs built by resolve-database.ts. */
function hostAndPort(uri: string): { host: string; port: number } {
  const authority = uri.replace(/^mongodb:\/\//, '').split('/')[0] ?? '';
  const colon = authority.lastIndexOf(':');
  return { host: authority.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(authority.slice(colon + 1)) };
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}
