#!/usr/bin/env node
/** The `mq` command (package.json bin). */
import { runCli } from './run-cli.js';

const code = await runCli(process.argv.slice(2), process.env, {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
});
process.exitCode = code;
