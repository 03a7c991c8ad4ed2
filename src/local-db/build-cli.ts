/**
 * `npm run db:build`: builds the local FerretDB server ahead of time (CI caches,
 * first run without the one-minute wait). Prints the binary's path on stdout.
 */
import { ensureFerretDbBinary, findProjectRoot, stderrLog } from './ferretdb-binary.js';

const result = await ensureFerretDbBinary({ projectRoot: await findProjectRoot(), log: stderrLog });
if (result.ok) {
  process.stdout.write(`${result.path}\n`);
} else {
  console.error(result.message);
  process.exitCode = 1;
}
