import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The newest .ts file under dir, with its mtime (ms); null when there is none. */
function newestSource(dir: string): { path: string; mtimeMs: number } | null {
  let newest: { path: string; mtimeMs: number } | null = null;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const found = entry.isDirectory() ? newestSource(path) : entry.name.endsWith('.ts') ? { path, mtimeMs: statSync(path).mtimeMs } : null;
    if (found && (!newest || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

/**
 * When `mq` runs from a checkout (dist/cli/main.js next to src/ and
 * tsconfig.build.json) whose sources changed after the last build, a one-line
 * hint to run `npm run build`; null otherwise, and always for an installed
 * package (no src/). `mq` never compiles anything itself.
 */
export function staleBuildHint(builtFile: string): string | null {
  try {
    const root = dirname(dirname(dirname(builtFile)));
    const src = join(root, 'src');
    if (!existsSync(join(root, 'tsconfig.build.json')) || !existsSync(src)) return null;
    const builtAt = statSync(builtFile).mtimeMs;
    const newest = newestSource(src);
    // A second of slack: tsc writes its outputs over a moment.
    if (!newest || newest.mtimeMs <= builtAt + 1000) return null;
    return `mq: hint: ${relative(root, newest.path)} changed after the last build; run \`npm run build\` to use your changes (this run uses dist/ as built).`;
  } catch {
    return null;
  }
}
