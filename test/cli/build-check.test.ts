import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staleBuildHint } from '../../src/cli/build-check.js';

/** A checkout in a temp dir: tsconfig.build.json, src/ and dist/cli/main.js, with chosen modification times. */
async function checkout(options: { sourceAgeS: number; builtAgeS: number; withSrc?: boolean }): Promise<{ root: string; built: string }> {
  const root = await mkdtemp(join(tmpdir(), 'mq-build-check-'));
  const now = Date.now() / 1000;
  await mkdir(join(root, 'dist', 'cli'), { recursive: true });
  const built = join(root, 'dist', 'cli', 'main.js');
  await writeFile(built, '');
  await utimes(built, now - options.builtAgeS, now - options.builtAgeS);
  if (options.withSrc !== false) {
    await writeFile(join(root, 'tsconfig.build.json'), '{}');
    await mkdir(join(root, 'src', 'cli'), { recursive: true });
    const source = join(root, 'src', 'cli', 'queue-commands.ts');
    await writeFile(source, '');
    await utimes(source, now - options.sourceAgeS, now - options.sourceAgeS);
  }
  return { root, built };
}

test('sources changed after the build: one line naming the file and `npm run build`', async () => {
  const { root, built } = await checkout({ sourceAgeS: 10, builtAgeS: 60 });
  try {
    expect(staleBuildHint(built)).toBe('mq: hint: src/cli/queue-commands.ts changed after the last build; run `npm run build` to use your changes (this run uses dist/ as built).');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a fresh build, or an installed package without src/, says nothing', async () => {
  const fresh = await checkout({ sourceAgeS: 60, builtAgeS: 10 });
  const installed = await checkout({ sourceAgeS: 0, builtAgeS: 10, withSrc: false });
  try {
    expect(staleBuildHint(fresh.built)).toBeNull();
    expect(staleBuildHint(installed.built)).toBeNull();
  } finally {
    await rm(fresh.root, { recursive: true, force: true });
    await rm(installed.root, { recursive: true, force: true });
  }
});
