/**
 * `npm run db:build` (and `npm test`, before Jest): builds the local FerretDB
 * server ahead of time, so no test waits a minute for it inside its time limit.
 * Prints the binary's path on stdout.
 */
import { ensureFerretDbBinary, findProjectRoot, stderrLog } from './ferretdb-binary.js';

// Tests and runs against a MongoDB of one's own need no local server.
if (process.env.MONGODB_URI) {
  console.error('MONGODB_URI is set: the local FerretDB server is not needed.');
  process.exit(0);
}
const result = await ensureFerretDbBinary({ projectRoot: await findProjectRoot(), log: stderrLog });
if (result.ok) {
  process.stdout.write(`${result.path}\n`);
} else {
  console.error(result.message);
  process.exitCode = 1;
}
