import Fastify, { type FastifyInstance } from 'fastify';
import { MongoClient, type Collection } from 'mongodb';
import { hashApiToken } from '../../src/tokens/api-token.js';

/**
 * The baseline: what any correct implementation must do per request, on the
 * same database: look the token up by its hash, then one write (submit) or one
 * read by key (get). No validation beyond that, no queue, no engine.
 */
export async function startBareRoutes(uri: string): Promise<{ url: string; close(): Promise<void> }> {
  const client = await new MongoClient(uri).connect();
  const db = client.db();
  const tokens = db.collection('api_tokens');
  const submits: Collection<{ _id: string; prNumber: number; at: Date }> = db.collection('bare_submits');
  const app: FastifyInstance = Fastify();
  const authenticated = async (header: unknown) => typeof header === 'string' && (await tokens.findOne({ tokenHash: hashApiToken(header), revokedAt: null })) !== null;

  app.post('/bare/submit', async (request, reply) => {
    if (!(await authenticated(request.headers['x-api-token']))) return reply.code(401).send('no');
    const { pr } = request.body as { pr: { number: number } };
    await submits.insertOne({ _id: `q:${pr.number}`, prNumber: pr.number, at: new Date() });
    return { ok: true };
  });
  app.post('/bare/get', async (request, reply) => {
    if (!(await authenticated(request.headers['x-api-token']))) return reply.code(401).send('no');
    const { pr } = request.body as { pr: { number: number } };
    const found = await submits.findOne({ _id: `q:${pr.number}` });
    return found ? { prNumber: found.prNumber } : reply.code(404).send('no');
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    async close() {
      await app.close();
      await client.close();
    },
  };
}

/** The bare routes as a child process (bare-server.js beside this file): its URL, pid, and how to stop it. */
export async function startBareProcess(uri: string): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bare-server.js', import.meta.url)), uri], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`the bare routes exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid as number,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
