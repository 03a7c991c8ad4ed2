import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { SANDBOX_HOST, type SandboxHost } from '../../adapters/sandbox/sandbox-host.js';
import { sendError } from '../errors.js';
import { pushSandboxBranchRequest, sandboxRepositoryRequest, updateSandboxPullRequestRequest } from '../schemas/sandbox.js';

const tags = ['Sandbox'];

/**
 * Drives the simulated host for demos and trials: shape a PR's CI behaviour,
 * push to it, push to a branch from outside the queue, look at the repository.
 * Same token rules as /v1; only repositories on host "sandbox".
 */
export function sandboxRoutes(sandbox: SandboxHost): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', async (request, reply) => {
      const repo = (request.body as { repo?: { host: string } } | undefined)?.repo;
      if (repo && repo.host.toLowerCase() !== SANDBOX_HOST) return sendError(reply, 400, `Field 'repo.host' must be "${SANDBOX_HOST}" for sandbox requests.`);
    });

    app.post('/updatePullRequest', {
      schema: { tags, summary: 'Create or change a simulated pull request (CI outcome, duration, conflicts, push)', body: updateSandboxPullRequestRequest },
      handler: async (request) => {
        const { repo, pr, ...change } = request.body;
        return sandbox.updatePullRequest(repo, pr.number, change);
      },
    });

    app.post('/pushToBranch', {
      schema: { tags, summary: 'Push to a branch from outside the queue (the queue rebuilds its runs)', body: pushSandboxBranchRequest },
      handler: async (request) => ({ branch: request.body.branch, sha: await sandbox.pushToBranch(request.body.repo, request.body.branch) }),
    });

    app.post('/getRepository', {
      schema: { tags, summary: 'The simulated repository: branch heads and pull requests', body: sandboxRepositoryRequest },
      handler: async (request) => sandbox.inspect(request.body.repo),
    });
  };
}
