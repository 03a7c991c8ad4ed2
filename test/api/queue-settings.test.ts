/** The queue settings added after v1's first set: defaults, updates, ranges. */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'settings' });
  token = await h.tokenFor('acme');
});
afterAll(() => h.close());

const queue = { repo: { host: 'github.com', owner: 'acme', name: 'settings' }, targetBranch: 'main' };

test('stallAlertMinutes (default 90) and retryFailedTests (default 0) are shown, updated, and checked', async () => {
  const created = await h.post('/v1/createQueue', queue, token);
  expect(created.json()).toMatchObject({ stallAlertMinutes: 90, retryFailedTests: 0 });
  const updated = await h.post('/v1/updateQueue', { ...queue, stallAlertMinutes: '0', retryFailedTests: 2 }, token);
  expect(updated.json()).toMatchObject({ stallAlertMinutes: 0, retryFailedTests: 2 });
  expect((await h.post('/v1/getQueue', queue, token)).json()).toMatchObject({ stallAlertMinutes: 0, retryFailedTests: 2 });
  for (const [field, value] of [['retryFailedTests', 6], ['retryFailedTests', -1], ['stallAlertMinutes', 1.5], ['stallAlertMinutes', 100_000]] as const) {
    const res = await h.post('/v1/updateQueue', { ...queue, [field]: value }, token);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(field);
  }
});

test('labelingBots (default none) takes only bot accounts, and is shown and stored as given', async () => {
  const ref = { ...queue, targetBranch: 'bots' };
  expect((await h.post('/v1/createQueue', ref, token)).json()).toMatchObject({ labelingBots: [] });
  const updated = await h.post('/v1/updateQueue', { ...ref, labelingBots: ['dependabot[bot]', 'renovate[bot]'] }, token);
  expect(updated.json()).toMatchObject({ labelingBots: ['dependabot[bot]', 'renovate[bot]'] });
  expect((await h.post('/v1/getQueue', ref, token)).json()).toMatchObject({ labelingBots: ['dependabot[bot]', 'renovate[bot]'] });
  // A person's account gets a real permission check: naming one here would skip it.
  const refused = await h.post('/v1/updateQueue', { ...ref, labelingBots: ['alice'] }, token);
  expect(refused.statusCode).toBe(400);
  expect(refused.body).toMatch(/labelingBots.*must be a bot account/);
  expect((await h.post('/v1/updateQueue', { ...ref, labelingBots: [] }, token)).json()).toMatchObject({ labelingBots: [] });
});
