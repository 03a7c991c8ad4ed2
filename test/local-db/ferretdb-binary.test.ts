import { appendFile, chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensureFerretDbBinary,
  ferretDbBinaryPath,
  ferretDbSourceDir,
  findProjectRoot,
  type LocalDbLog,
} from '../../src/local-db/ferretdb-binary.js';

const realRoot = await findProjectRoot();

/** A throw-away project with the real wrapper sources and a fake `go` that counts builds. */
async function fakeProject(goExitCode = 0) {
  const root = await mkdtemp(join(tmpdir(), 'mq-ferretdb-binary-'));
  await mkdir(ferretDbSourceDir(root), { recursive: true });
  for (const name of ['main.go', 'id_index.go', 'go.mod', 'go.sum']) {
    await copyFile(join(ferretDbSourceDir(realRoot), name), join(ferretDbSourceDir(root), name));
  }
  const builds = join(root, 'builds.log');
  const go = join(root, 'fake-go');
  // Called as `go build -o OUT .`: $3 is the output file.
  await writeFile(
    go,
    goExitCode === 0
      ? `#!/bin/sh\necho build >> '${builds}'\nprintf '#!/bin/sh\\necho fake\\n' > "$3"\nchmod +x "$3"\n`
      : `#!/bin/sh\necho 'main.go:1: syntax error' >&2\nexit ${goExitCode}\n`,
  );
  await chmod(go, 0o755);
  const messages: string[] = [];
  const log: LocalDbLog = { info: (m) => messages.push(m), warn: (m) => messages.push(m) };
  const buildCount = async () => (await readFile(builds, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  return { root, go, log, messages, buildCount, findGo: async () => go };
}

describe('ensureFerretDbBinary', () => {
  const roots: string[] = [];
  afterAll(async () => {
    await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  });

  it('finds the project root from its own location', () => {
    expect(realRoot).toMatch(/\S/);
  });

  it('builds once, announces the build, then serves the cache', async () => {
    const p = await fakeProject();
    roots.push(p.root);
    const first = await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo });
    expect(first).toEqual({ ok: true, path: ferretDbBinaryPath(p.root), built: true });
    expect(p.messages[0]).toMatch(/Building the local FerretDB server/);

    const second = await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo });
    expect(second).toEqual({ ok: true, path: ferretDbBinaryPath(p.root), built: false });
    expect(await p.buildCount()).toBe(1);

    // A cached binary needs no Go at all.
    const noGo = await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: async () => null });
    expect(noGo).toMatchObject({ ok: true, built: false });
  });

  it('rebuilds when a source file changes', async () => {
    const p = await fakeProject();
    roots.push(p.root);
    await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo });
    await appendFile(join(ferretDbSourceDir(p.root), 'main.go'), '\n// changed\n');
    const again = await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo });
    expect(again).toMatchObject({ ok: true, built: true });
    expect(await p.buildCount()).toBe(2);
  });

  it('says so, as a value, when Go is missing', async () => {
    const p = await fakeProject();
    roots.push(p.root);
    const result = await ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: async () => null });
    expect(result).toMatchObject({ ok: false, reason: 'go-not-found' });
    expect(p.messages).toEqual([]);
  });

  it('lets concurrent builders finish with one intact binary and no temp files', async () => {
    const p = await fakeProject();
    roots.push(p.root);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await readFile(ferretDbBinaryPath(p.root), 'utf8')).toContain('echo fake');
    expect(await readdir(join(p.root, '.data', 'bin'))).toEqual(['ferretdb-local', 'ferretdb-local.sha256']);
  });

  it('throws with the compiler output when the build fails, leaving nothing behind', async () => {
    const p = await fakeProject(2);
    roots.push(p.root);
    await expect(ensureFerretDbBinary({ projectRoot: p.root, log: p.log, findGo: p.findGo })).rejects.toThrow(
      /Building the local FerretDB server failed[\s\S]*syntax error/,
    );
    expect(await readdir(join(p.root, '.data', 'bin'))).toEqual([]);
  });
});
