import { generateKeyPairSync } from 'node:crypto';
import { Probot } from 'probot';
import { githubApp, type GitHubAppDeps } from '../../src/github/github-app.js';
import type { RepoRef } from '../../src/domain/repo.js';
import { findExample } from '../support/fake-github/index.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

/** The App's handlers alone: which repositories they said had their protection, rulesets or settings changed. */
async function appSaying(): Promise<{ probot: Probot; changed: string[] }> {
  const changed: string[] = [];
  const deps = { hostName: 'github.com', rememberInstallation() {}, policyChanged: (repo: RepoRef) => void changed.push(`${repo.host} ${repo.owner}/${repo.name}`) } as unknown as GitHubAppDeps;
  const probot = new Probot({ appId: 1, privateKey, secret: 'secret', logLevel: 'fatal' });
  await probot.load(githubApp(deps));
  return { probot, changed };
}

const repository = { ...(findExample('repository', 'edited').repository as object), name: 'widgets', full_name: 'acme/widgets', owner: { login: 'acme', id: 1, type: 'Organization' } };
let delivery = 0;
const receive = (probot: Probot, name: string, payload: object) => probot.receive({ id: `d${++delivery}`, name, payload } as unknown as Parameters<Probot['receive']>[0]);

describe('webhooks that say what landing depends on changed', () => {
  test.each([
    ['branch_protection_rule', 'created'],
    ['branch_protection_rule', 'edited'],
    ['branch_protection_rule', 'deleted'],
    ['repository_ruleset', 'edited'],
    ['repository', 'edited'],
  ])('%s.%s: the repository is read again', async (name, action) => {
    const { probot, changed } = await appSaying();
    await receive(probot, name, { action, repository, repository_ruleset: { id: 7 }, rule: { name: 'main' } });
    expect(changed).toEqual(['github.com acme/widgets']);
  });

  test("an organization's ruleset (no repository named) and a repository renamed change nothing, and fail nothing", async () => {
    const { probot, changed } = await appSaying();
    await receive(probot, 'repository_ruleset', { action: 'edited', repository_ruleset: { id: 7, source_type: 'Organization', source: 'acme' }, organization: { login: 'acme' } });
    await receive(probot, 'repository', { action: 'renamed', repository, changes: { repository: { name: { from: 'gadgets' } } } });
    expect(changed).toEqual([]);
  });
});
