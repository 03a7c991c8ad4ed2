import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGitHubOctokit } from '../../src/adapters/github/index.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import { recordingLog } from './github-fixtures.js';

/** A GitHub that takes every request and never answers (a hung connection, a stuck proxy). */
let server: Server;
let baseUrl: string;
let received = 0;
beforeAll(async () => {
  server = createServer(() => void received++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a GitHub request that is never answered times out, is retried, and then fails as an outage (not a verdict)', async () => {
  const log = recordingLog();
  const client = createGitHubOctokit({ auth: 'test-token', baseUrl, log, unitMs: 1, retries: 1, requestTimeoutMs: 200 });
  const started = Date.now();
  const failure = await client.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main' }).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(Error);
  // Two attempts of 200 ms each, not forever.
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(received).toBe(2);
  // The queue retries it with back-off and the PR keeps its place.
  expect(isTransientHostError(failure)).toBe(true);
  expect(log.entries.some((e) => e.message === 'GitHub request failed; retrying with back-off')).toBe(true);
});
