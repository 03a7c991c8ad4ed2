import { startBareRoutes } from './bare-route.js';

/**
 * The bare routes in a process of their own (as the service is), so the CPU
 * each uses per request can be read from /proc apart from the load generator's.
 * Prints its URL on the first line of stdout; stops on SIGTERM.
 */
const uri = process.argv[2];
if (!uri) throw new Error('usage: bare-server.js <mongodb uri>');
const bare = await startBareRoutes(uri);
process.stdout.write(`${bare.url}\n`);
process.once('SIGTERM', () => void bare.close().then(() => process.exit(0)));
