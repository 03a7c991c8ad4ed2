/**
 * The dashboard in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core; `.ci/run` installs the package when it is missing), against
 * the built pages (`npm run build`) served by the service itself, on the
 * sandbox host. Screenshots of each page go to SCREENSHOTS (printed at the end).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEFAULT_UI_ROOT } from '../../src/dashboard/dashboard-plugin.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

const CHROMIUM = process.env.MQ_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = join(process.cwd(), '.data', 'screenshots', 'dashboard');

let h: ApiHarness;
let browser: Browser;
let base: string;
let token: string;

beforeAll(async () => {
  if (!existsSync(join(DEFAULT_UI_ROOT, 'index.html'))) throw new Error(`The dashboard is not built at ${DEFAULT_UI_ROOT}: run \`npm run build\` first.`);
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set MQ_CHROMIUM).`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  // Sandbox CI at a tenth of its stated time: an 8 s run takes 0.8 s.
  h = await startApiHarness({ prefix: 'browser', sandboxTimeScale: 0.1 });
  token = await h.tokenFor('demo', 'sandbox');
  base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => {
  // Every page signed in ran under the dashboard's policy without a refusal.
  expect(cspViolations).toEqual([]);
  await browser?.close();
  await h?.close();
  process.stderr.write(`dashboard screenshots: ${SCREENSHOTS}\n`);
}, 30_000);

async function api(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Content Security Policy refusals any page reported: the dashboard must work under its own policy. */
const cspViolations: string[] = [];

async function signedInPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await page.goto(base);
  await page.getByLabel('Organization API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Queues' }).waitFor();
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

test('the dashboard is served with its content security policy, and no page may frame it', async () => {
  const res = await fetch(base);
  expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
  expect(res.headers.get('x-frame-options')).toBe('DENY');
});

test('a wrong token is refused, and nothing is stored in the page', async () => {
  const page = await browser.newPage();
  await page.goto(base);
  await page.getByLabel('Organization API token').fill('mq_not-a-real-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectText(page.getByRole('alert'), /not hold a valid token|unknown|invalid/i);
  expect(await page.context().cookies()).toEqual([]);
  expect(await page.evaluate(() => { const g = globalThis as unknown as { localStorage: object; sessionStorage: object }; return JSON.stringify(g.localStorage) + JSON.stringify(g.sessionStorage); })).toBe('{}{}');
  await shot(page, 'sign-in-refused');
  await page.close();
}, 30_000);

test('signed in: the queue is listed, a PR goes from PENDING to MERGED live without a reload, and an ejection shows its reason', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'live' };
  await api('/v1/createQueue', { repo, targetBranch: 'main', concurrency: 1 });
  // #1 tests for 10 minutes (a minute here): #2 waits PENDING behind it until #1 is cancelled.
  await api('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, title: 'First', ciSeconds: 600 });
  await api('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, title: 'Second', ciSeconds: 10 });
  await api('/sandbox/updatePullRequest', { repo, pr: { number: 3 }, title: 'Breaks the build', outcome: 'fail', ciSeconds: 10 });
  await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 2 } });

  const page = await signedInPage();
  // The session cookie is HttpOnly and SameSite=Strict: the page's script cannot read it.
  const [cookie] = await page.context().cookies();
  expect(cookie).toMatchObject({ name: 'mq_session', httpOnly: true, sameSite: 'Strict' });
  expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe('');
  await page.getByRole('link', { name: 'demo/live → main' }).waitFor();
  await shot(page, 'queues');

  await page.getByRole('link', { name: 'demo/live → main' }).click();
  const second = page.locator('li[data-pr="2"]');
  await expectText(second, /PENDING/);
  await expectText(second, /merges in|merges now/);
  // A marker that a reload would wipe: the page must change by itself.
  await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
  await shot(page, 'queue-testing');
  await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 3 } });
  await api('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  await expectText(second, /MERGED/, 20_000);
  await expectText(page.locator('li[data-pr="3"]'), /FAILED.*failed tests/, 20_000);
  expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  await shot(page, 'queue-after');

  await page.goto(`${base}/#/q/sandbox/demo/live/main/health`);
  await expectText(page.locator('.totals'), /Merged\s*1/);
  // Charts draw after the numbers render (uPlot makes its canvas in an effect): wait for them.
  await page.locator('.chart canvas').nth(3).waitFor({ timeout: 10_000 });
  expect(await page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(4);
  await shot(page, 'health');
  await page.close();
}, 60_000);

test('a PR is cancelled from its page, and another organization\'s queue is not visible', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'cancel' };
  await api('/v1/createQueue', { repo, targetBranch: 'main' });
  await api('/sandbox/updatePullRequest', { repo, pr: { number: 7 }, title: 'Slow one', ciSeconds: 600 });
  await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 7 } });
  const otherToken = await h.tokenFor('someone-else', 'sandbox');
  await h.post('/v1/createQueue', { repo: { host: 'sandbox', owner: 'someone-else', name: 'secret' }, targetBranch: 'main' }, otherToken);

  const page = await signedInPage();
  await page.getByRole('link', { name: 'demo/cancel → main' }).waitFor();
  expect(await page.getByText('someone-else/secret').count()).toBe(0);
  await page.goto(`${base}/#/q/sandbox/demo/cancel/main/pr/7`);
  await expectText(page.getByRole('heading', { level: 1 }), /TESTING/);
  await shot(page, 'pull-request');
  // Asked once more: declined, nothing happens; accepted, it is cancelled.
  const asked: string[] = [];
  page.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await page.getByRole('button', { name: 'Cancel' }).click();
  await new Promise((r) => setTimeout(r, 500));
  expect(asked).toEqual([expect.stringMatching(/Take #7 out of the queue\?/)]);
  expect((await api('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 7 } })).state).toBe('TESTING');
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expectText(page.getByRole('heading', { level: 1 }), /CANCELLED/);
  await expectText(page.locator('.timeline'), /user requested/);
  // The API agrees: the cancel went through the same use case as POST /v1/cancelPullRequest.
  expect((await api('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 7 } })).state).toBe('CANCELLED');
  // The other organization's queue answers 403 to this session, as to this token.
  const status = await page.evaluate(async () => {
    const session = (await (await fetch('/ui/session')).json()) as { csrfToken: string };
    const res = await fetch('/v1/getQueue', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body: JSON.stringify({ repo: { host: 'sandbox', owner: 'someone-else', name: 'secret' }, targetBranch: 'main' }) });
    return res.status;
  });
  expect(status).toBe(403);
  await page.close();
}, 60_000);

test('a parallel queue draws its runs as lanes that do not wait for each other', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'lanes' };
  await api('/v1/createQueue', { repo, targetBranch: 'main', mode: 'parallel', concurrency: 4 });
  for (const [n, targets] of [[1, ['api']], [2, ['api']], [3, ['web']]] as const) {
    const pr = await api('/sandbox/updatePullRequest', { repo, pr: { number: n }, title: `Touches ${targets.join()}`, ciSeconds: 600 });
    await api('/v1/setImpactedTargets', { repo, targetBranch: 'main', pr: { number: n, sha: pr.headSha }, impactedTargets: targets });
    await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
  }
  const page = await signedInPage();
  await page.goto(`${base}/#/q/sandbox/demo/lanes/main`);
  await expectText(page.locator('h2', { hasText: 'Lanes in flight' }), /Lanes/);
  await page.locator('.lane').nth(1).waitFor();
  const lanes = await page.locator('.lane').evaluateAll((els) => els.map((el) => (el as unknown as { textContent: string }).textContent.match(/#\d+/g)?.join(' ')));
  // #2 is tested on top of #1 (same target); #3 has a lane of its own.
  expect(lanes.sort()).toEqual(['#1 #1 #2', '#3']);
  await shot(page, 'queue-lanes');
  await page.close();
}, 60_000);

test('a blocked landing says when the queue tries again by itself, and "Try landing now" tries at once without touching the state (Resume while paused)', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'blocked' };
  const created = await api('/v1/createQueue', { repo, targetBranch: 'main' });
  // Draining: the button must not send the state the page last saw (another operator may have changed it since).
  await api('/v1/updateQueue', { repo, targetBranch: 'main', state: 'DRAINING' });
  // As the runner shows a refusal it holds (the sandbox host never refuses a landing).
  const block = (minutes: number) => ({ landingBlocked: { since: new Date(), message: 'GitHub refused to move main: Reference update failed.', nextTryAt: new Date(Date.now() + minutes * 60_000) }, updatedAt: new Date() });
  await h.stores.queues.update(created.id, block(125));
  const page = await signedInPage();
  await page.goto(`${base}/#/q/sandbox/demo/blocked/main`);
  const problem = page.locator('.problem', { hasText: 'landing blocked' });
  await expectText(problem, /tries again by itself in 2 h 5 min/);
  await expectText(problem, /Reference update failed/);
  await shot(page, 'queue-landing-blocked');
  // Any change of the queue tries at once; the engine holds no block, so the record's goes.
  await page.getByRole('button', { name: 'Try landing now' }).click();
  await page.locator('.problem').waitFor({ state: 'detached', timeout: 10_000 });
  expect(await page.getByRole('button', { name: 'Try landing now' }).count()).toBe(0);
  expect((await api('/v1/getQueue', { repo, targetBranch: 'main' })).state).toBe('DRAINING');
  // Paused: Resume is what tries (a change that kept it paused would drop the block and land nothing).
  await api('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' });
  await h.stores.queues.update(created.id, block(10));
  await page.reload();
  await expectText(page.locator('.problem', { hasText: 'landing blocked' }), /tries again by itself in 10 min/);
  await expectText(page.locator('p.hint', { hasText: 'paused' }), /Resume tries landing again/);
  expect(await page.getByRole('button', { name: 'Try landing now' }).count()).toBe(0);
  await page.close();
}, 60_000);

test('settings: only what was changed is sent, a refusal is said in the API\'s words and changes nothing, adaptive tuning holds its own settings', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'settings' };
  const queue = { repo, targetBranch: 'main' };
  await api('/v1/createQueue', queue);
  const page = await signedInPage();
  await page.goto(`${base}/#/q/sandbox/demo/settings/main`);
  await page.getByRole('link', { name: 'Settings' }).click();
  const concurrency = page.getByLabel('Concurrency', { exact: true });
  await concurrency.waitFor();
  // A new queue tunes itself: what it chooses is shown, not editable.
  expect(await page.getByLabel('Batch size').isDisabled()).toBe(true);
  // Someone else changes the merge method after the page read the queue: the page must not put the old one back.
  await api('/v1/updateQueue', { ...queue, mergeMethod: 'rebase' });
  await concurrency.fill('3');
  await page.getByLabel('Required checks').fill('ci, lint');
  await page.getByRole('button', { name: 'Save' }).click();
  await expectText(page.getByRole('status'), /Saved: concurrency, requiredStatuses/);
  expect(await api('/v1/getQueue', queue)).toMatchObject({ concurrency: 3, requiredStatuses: ['ci', 'lint'], mergeMethod: 'rebase', tuning: 'adaptive' });
  expect(await page.getByLabel('Merge method').inputValue()).toBe('rebase');
  // Fixed tuning makes its settings editable; a value the API refuses is said in its words, and nothing is stored.
  await page.getByLabel('Tuning').selectOption('fixed');
  expect(await page.getByLabel('Batch size').isDisabled()).toBe(false);
  await page.getByLabel('Retries of a failed PR').fill('9');
  await page.getByRole('button', { name: 'Save' }).click();
  await expectText(page.getByRole('alert'), /retryFailedTests/);
  expect(await api('/v1/getQueue', queue)).toMatchObject({ tuning: 'adaptive', retryFailedTests: 0 });
  expect(await page.getByLabel('Retries of a failed PR').inputValue()).toBe('9'); // what was typed stays to be mended
  // Mended, with the required checks cleared: the branch protection decides again.
  await page.getByLabel('Retries of a failed PR').fill('1');
  await page.getByLabel('Required checks').fill('');
  await page.getByLabel('Bots that may label').fill('dependabot[bot]');
  await page.getByRole('button', { name: 'Save' }).click();
  await expectText(page.getByRole('status'), /Saved: requiredStatuses, retryFailedTests, tuning, labelingBots/);
  const stored = await api('/v1/getQueue', queue);
  expect(stored).toMatchObject({ tuning: 'fixed', retryFailedTests: 1, concurrency: 3, mergeMethod: 'rebase', labelingBots: ['dependabot[bot]'] });
  expect(stored.requiredStatuses).toBeUndefined();
  await shot(page, 'settings');
  // A queue its repository's file configures: shown, read-only, with the file and commit it came from.
  const created = await api('/v1/getQueue', queue);
  await h.stores.queues.update(created.id, { configFile: { path: '.github/merge-queue.yml', commitSha: 'abc1234def', appliedAt: new Date() }, updatedAt: new Date() });
  await page.reload();
  await expectText(page.getByRole('note'), /merge-queue\.yml at abc1234/);
  expect(await concurrency.isDisabled()).toBe(true);
  expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
  await page.close();
}, 60_000);

test('keyboard only: sign in with Tab and Enter; the queue page fits a phone without sideways scrolling', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'phone' };
  await api('/v1/createQueue', { repo, targetBranch: 'main' });
  await api('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, title: 'A change with a rather long title that has to wrap on a small screen', ciSeconds: 600 });
  await api('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
  await page.goto(base);
  // The form appears once the page has asked whether a session exists.
  await page.getByLabel('Organization API token').waitFor();
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).toBe('token');
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Queues' }).waitFor();
  await page.goto(`${base}/#/q/sandbox/demo/phone/main`);
  await expectText(page.locator('li[data-pr="1"]'), /rather long title/);
  const overflow = await page.evaluate(() => {
    const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return g.document.documentElement.scrollWidth - g.innerWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, 'queue-phone');
  await page.close();
}, 60_000);

/** Waits for a locator's text to match (Playwright's own expect is not Jest's). */
async function expectText(locator: ReturnType<Page['locator']>, pattern: RegExp, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = (await locator.first().textContent({ timeout: timeoutMs }).catch(() => null)) ?? '';
    if (pattern.test(last)) return;
    if (Date.now() > deadline) throw new Error(`expected text matching ${pattern}, last seen: ${JSON.stringify(last.slice(0, 300))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
