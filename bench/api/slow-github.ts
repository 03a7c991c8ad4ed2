import { createServer, type Server } from 'node:http';

/** A GitHub that answers every call after `delayMs` (with a 503): what the webhook route must not wait for. */
export async function startSlowGitHub(delayMs: number): Promise<{ url: string; calls(): number; close(): Promise<void> }> {
  let calls = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    calls++;
    request.resume();
    const timer = setTimeout(() => {
      timers.delete(timer);
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"slow"}');
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls: () => calls,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
