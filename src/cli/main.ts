#!/usr/bin/env node
/**
 * The `mq` command (package.json bin). Runs what `npm run build` compiled,
 * never compiling on each call; from a checkout whose sources changed since,
 * it says so on one line of stderr (MQ_NO_BUILD_CHECK=1 silences it).
 */
import { fileURLToPath } from 'node:url';
import { staleBuildHint } from './build-check.js';
import { readSecret } from './read-secret.js';
import { runCli } from './run-cli.js';

if (!process.env.MQ_NO_BUILD_CHECK) {
  const hint = staleBuildHint(fileURLToPath(import.meta.url));
  if (hint) process.stderr.write(`${hint}\n`);
}

const code = await runCli(process.argv.slice(2), process.env, {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  readSecret: (prompt) => readSecret(prompt),
});
process.exitCode = code;
