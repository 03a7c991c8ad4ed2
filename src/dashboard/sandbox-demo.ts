import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SANDBOX_HOST, type SandboxHost } from '../adapters/sandbox/sandbox-host.js';
import type { ApiDeps } from '../api/deps.js';
import { sendError, sendFailure } from '../api/errors.js';
import { repoSchema } from '../api/schemas/common.js';

/** The demo's PRs: something to watch within a minute (CI of 6 to 20 s). */
const DEMO_PULL_REQUESTS = [
  { title: 'Add the pricing page', outcome: 'pass', ciSeconds: 8 },
  { title: 'Fix a typo in the README', outcome: 'pass', ciSeconds: 6 },
  { title: 'Refactor the cache (breaks a test)', outcome: 'fail', ciSeconds: 10 },
  { title: 'Upgrade the HTTP client (flaky test)', outcome: 'flaky', ciSeconds: 8, flakyRate: 0.5 },
  { title: 'Rename the config file', outcome: 'pass', ciSeconds: 12 },
  { title: 'Move the config file (conflicts with the rename)', outcome: 'pass', ciSeconds: 8, conflictsWithPrevious: true },
  { title: 'Speed up the build', outcome: 'pass', ciSeconds: 20 },
  { title: 'Add dark mode', outcome: 'pass', ciSeconds: 9 },
] as const;

/**
 * POST /sandbox/createDemoQueue: a new sandbox repository of the caller's
 * organization with a queue and a mix of passing, failing, flaky and
 * conflicting PRs submitted to it, so a newcomer has something to watch.
 * Only where the sandbox is on, and only for a token of host "sandbox".
 */
export function sandboxDemoRoutes(deps: ApiDeps, sandbox: SandboxHost): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/createDemoQueue', {
      schema: { tags: ['Sandbox'], summary: 'Create a demo queue with passing, failing, flaky and conflicting PRs on the sandbox', body: z.object({}), response: { 200: z.object({ repo: repoSchema, targetBranch: z.string() }) } },
      handler: async (request, reply) => {
        const token = request.apiToken;
        if (!token || token.host !== SANDBOX_HOST) return sendError(reply, 400, `Demo queues live on the sandbox: sign in with a token for host "${SANDBOX_HOST}".`);
        const repo = { host: SANDBOX_HOST, owner: token.owner, name: `demo-${deps.now().getTime().toString(36)}` };
        const created = await deps.queues.create({ repo, targetBranch: 'main', concurrency: 2 });
        if (!created.ok) return sendFailure(reply, created.failure);
        let number = 0;
        for (const pr of DEMO_PULL_REQUESTS) {
          number += 1;
          await sandbox.updatePullRequest(repo, number, {
            title: pr.title,
            outcome: pr.outcome,
            ciSeconds: pr.ciSeconds,
            ...('flakyRate' in pr ? { flakyRate: pr.flakyRate } : {}),
            ...('conflictsWithPrevious' in pr ? { conflictsWith: [number - 1] } : {}),
          });
          const submitted = await deps.pullRequests.submit({ repo, targetBranch: 'main', prNumber: number });
          if (!submitted.ok) return sendFailure(reply, submitted.failure);
        }
        return { repo, targetBranch: 'main' };
      },
    });
  };
}
