import { randomUUID } from 'node:crypto';
import { Rng } from '../../../src/simulation/random.js';
import { commitsBetween, treeSha } from './git.js';
import type { FakeEvent, Repo } from './model.js';
import type { Shapes } from './shapes.js';
import type { FakeState, HookAttempt } from './state.js';
import { deepMerge, deliver, findExample, type Delivery, type Payload, type WebhookTarget } from './webhook-delivery.js';

/**
 * Webhooks from the fake's own state. Every change (through the API or a test
 * helper) emits an event; its payload is built at that moment, on top of GitHub's
 * example for that event and action, so it carries both the real shape and the fake's
 * current facts. Delivery is sequential and in order by default; with
 * `concurrent`, as GitHub really delivers: each event on its own after a random
 * delay, so they overlap and arrive out of order.
 */

export interface WebhookOptions extends WebhookTarget {
  /** Deliver events as they happen (default), or hold them until `flush()`. */
  auto?: boolean;
  /** Only these event names are delivered (the app's subscriptions, e.g. from app.yml). */
  events?: string[];
  /** Deliver each event concurrently after a random delay of up to `maxDelayMs` (seeded): overlapping, reordered. */
  concurrent?: ConcurrentDelivery;
}

/** GitHub's manners, at random (seeded): deliveries late and overlapping, and some never made or made twice. */
export interface ConcurrentDelivery {
  maxDelayMs: number;
  seed?: number;
  /** The share of events never delivered, among those `mayLose` allows (all by default). */
  lostRate?: number;
  mayLose?: (event: BuiltEvent) => boolean;
  /** The share of deliveries made a second time (the same `x-github-delivery`), up to `maxDelayMs` × 3 after the first. */
  repeatedRate?: number;
}

export interface BuiltEvent {
  event: string;
  action?: string;
  payload: Payload;
}

/** Top-level fields the fake sets whole: merging the example's into them would leak stale values. */
const REPLACED = new Set(['changes', 'label', 'commits', 'head_commit', 'branches', 'before', 'after', 'ref']);

export class FakeWebhooks {
  /** Every delivery attempt, in order (redeliveries included). */
  readonly deliveries: Delivery[] = [];
  /** Built but not yet delivered (manual mode, or waiting for `deliverTo`). */
  readonly pending: BuiltEvent[] = [];
  /** Never delivered (ConcurrentDelivery.lostRate). */
  readonly lost: BuiltEvent[] = [];
  private target?: WebhookOptions;
  private queue: Promise<unknown> = Promise.resolve();
  /** Concurrent deliveries not yet answered. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The same seed, the same delays. */
  private rng = new Rng(1);

  constructor(
    private readonly state: FakeState,
    private readonly shapes: Shapes,
    /** A payload the fake could not build is its own bug: reported, never thrown into a state change. */
    private readonly onError: (message: string) => void,
  ) {
    state.appHook = {
      attempts: () => this.deliveries.map(hookAttempt),
      redeliver: (guid) => {
        this.redeliver(guid).catch((error: unknown) => onError(`could not redeliver ${guid}: ${error instanceof Error ? error.message : String(error)}`));
      },
    };
    state.onEvent((e) => {
      let built: BuiltEvent;
      try {
        built = this.build(e);
      } catch (error) {
        onError(`could not build the ${e.name} webhook: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      if (this.target && this.target.events && !this.target.events.includes(built.event)) return;
      if (this.target?.auto !== false && this.target) this.enqueue(built);
      else this.pending.push(built);
    });
  }

  /** Where to deliver from now on. With `auto` (default) events are POSTed as they happen. */
  deliverTo(target: WebhookOptions): void {
    this.target = { auto: true, ...target };
    this.rng = new Rng(target.concurrent?.seed ?? 1);
  }

  /** Stop delivering automatically (events then collect in `pending`). */
  pause(): void {
    if (this.target) this.target.auto = false;
  }

  resume(): void {
    if (this.target) this.target.auto = true;
    this.flush();
  }

  /** Delivers every pending event, in order; resolves when all were answered. */
  flush(): Promise<void> {
    const events = this.pending.splice(0);
    for (const e of events) this.enqueue(e);
    return this.idle();
  }

  /** Forgets pending events (GitHub lost them: the app's reconcile must catch up). */
  drop(): BuiltEvent[] {
    return this.pending.splice(0);
  }

  /** Resolves once every queued delivery has been answered. */
  async idle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.queue;
      await current;
      await Promise.all([...this.inFlight]);
    } while (current !== this.queue || this.inFlight.size > 0);
  }

  /**
   * Sends a payload built from GitHub's example for `event`/`action` with `overrides`
   * deep-merged on top. With `repo`, its repository, installation and organization are
   * filled in first, as GitHub would.
   */
  send(event: string, action: string | undefined, overrides: Payload = {}, options: { repo?: string; sender?: string; deliveryId?: string; target?: WebhookTarget } = {}): Promise<Delivery> {
    let payload = findExample(event, action);
    if (options.repo) payload = deepMerge(payload, this.envelope(this.state.repo(options.repo), options.sender ?? 'octocat'));
    payload = deepMerge(payload, overrides);
    return this.post({ event, action, payload }, options);
  }

  /** The payload GitHub would send for this event now (without sending it). */
  build(e: FakeEvent): BuiltEvent {
    const repo = this.state.repo(e.repo);
    const own = this.specific(e, repo);
    const action = 'action' in e ? e.action : undefined;
    let payload = findExample(e.name, action);
    for (const key of REPLACED) if (key in own) delete payload[key];
    payload = deepMerge(deepMerge(payload, this.envelope(repo, e.sender)), own);
    if (e.name === 'push') {
      // Push payloads (alone) give the repository's dates as Unix timestamps.
      const r = payload.repository as Payload;
      for (const key of ['created_at', 'pushed_at']) if (typeof r[key] === 'string') r[key] = Math.floor(Date.parse(r[key]) / 1000);
    }
    return { event: e.name, action, payload };
  }

  /** Sends the same delivery again: same `x-github-delivery`, same bytes. */
  redeliver(deliveryId: string, target?: WebhookTarget): Promise<Delivery> {
    const original = this.deliveries.find((d) => d.id === deliveryId);
    if (!original) throw new Error(`fake-github: no delivery ${deliveryId}`);
    return this.post({ event: original.event, action: original.action, payload: original.payload }, { deliveryId, target, body: original.body });
  }

  /**
   * Builds an event from the current state and sends it now, whatever the automatic
   * delivery settings: e.g. `emit({ name: 'pull_request', action: 'labeled', repo:
   * 'acme/widgets', number: 1, sender: 'alice', extra: { label: 'merge-queue' } })`.
   * Nothing in the state changes.
   */
  emit(e: FakeEvent, options: { deliveryId?: string; target?: WebhookTarget } = {}): Promise<Delivery> {
    return this.post(this.build(e), options);
  }

  /** Sends an event built from state (e.g. one taken from `pending` or `build`). */
  sendBuilt(built: BuiltEvent, options: { deliveryId?: string; target?: WebhookTarget } = {}): Promise<Delivery> {
    return this.post(built, options);
  }

  private enqueue(built: BuiltEvent): void {
    const concurrent = this.target?.concurrent;
    if (!concurrent) {
      void this.post(built, {});
      return;
    }
    const target = this.target as WebhookOptions;
    const delay = Math.floor(this.rng.next() * concurrent.maxDelayMs);
    // Drawn only when asked for: a seed without losses or repeats gives the delays it always gave.
    const lose = concurrent.lostRate !== undefined && this.rng.next() < concurrent.lostRate && (concurrent.mayLose?.(built) ?? true);
    const repeatAfter = concurrent.repeatedRate !== undefined && this.rng.next() < concurrent.repeatedRate ? delay + Math.floor(this.rng.next() * 3 * concurrent.maxDelayMs) : null;
    if (lose) {
      this.lost.push(built);
      return;
    }
    const deliveryId = randomUUID();
    const send = (after: number) => {
      const sent: Promise<unknown> = new Promise((r) => setTimeout(r, after))
        .then(() => deliver(target, built.event, built.payload, { appId: this.state.options.app.id, deliveryId }))
        .then((d) => void this.deliveries.push(d))
        .finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    };
    send(delay);
    if (repeatAfter !== null) send(repeatAfter);
  }

  private post(built: BuiltEvent, options: { deliveryId?: string; target?: WebhookTarget; body?: string }): Promise<Delivery> {
    const target = options.target ?? this.target;
    if (!target) throw new Error('fake-github: no webhook target; call fake.webhooks.deliverTo({ url, secret }) or pass one');
    const result = this.queue.then(() => deliver(target, built.event, built.payload, { deliveryId: options.deliveryId, appId: this.state.options.app.id, body: options.body }));
    this.queue = result.then((d) => {
      this.deliveries.push(d);
    });
    return result;
  }

  private envelope(repo: Repo, sender: string): Payload {
    const installation = this.state.installationFor(repo);
    const owner = this.state.user(repo.owner);
    return {
      repository: this.shapes.repo(repo),
      sender: this.shapes.user(sender),
      installation: installation ? { id: installation.id, node_id: this.shapes.nodeId('Installation', installation.id) } : undefined,
      organization:
        owner.type === 'Organization'
          ? { login: owner.login, id: owner.id, node_id: this.shapes.nodeId('Organization', owner.id), url: `${this.shapes.api}/orgs/${owner.login}`, description: null }
          : undefined,
    };
  }

  private specific(e: FakeEvent, repo: Repo): Payload {
    const { state, shapes } = this;
    switch (e.name) {
      case 'pull_request': {
        const pr = state.pull(repo, e.number);
        const extra = { ...(e.extra ?? {}) };
        if (typeof extra.label === 'string') extra.label = shapes.label(repo, state.label(repo, extra.label));
        return { action: e.action, number: pr.number, pull_request: shapes.pull(repo, pr), ...extra };
      }
      case 'pull_request_review': {
        const pr = state.pull(repo, e.number);
        const review = pr.reviews.find((r) => r.id === e.reviewId)!;
        return { action: e.action, review: shapes.review(repo, pr, review), pull_request: shapes.pull(repo, pr) };
      }
      case 'issue_comment': {
        const pr = state.pull(repo, e.number);
        const comment = repo.comments.find((c) => c.id === e.commentId)!;
        return { action: e.action, issue: shapes.issue(repo, pr), comment: shapes.comment(repo, comment) };
      }
      case 'push':
        return this.push(e, repo);
      case 'repository':
        return { action: e.action, changes: { repository: { name: { from: e.from } } } };
      case 'create':
      case 'delete':
        return {
          ref: e.ref.replace(/^refs\/(heads|tags)\//, ''),
          ref_type: e.ref.startsWith('refs/tags/') ? 'tag' : 'branch',
          master_branch: repo.defaultBranch,
          description: null,
          pusher_type: 'user',
        };
      case 'check_run': {
        const run = state.checkRuns.get(e.id)!;
        const json = shapes.checkRun(run);
        return { action: e.action, check_run: { ...json, check_suite: this.checkSuite(repo, run.checkSuiteId, run.headSha, run.appId) } };
      }
      case 'check_suite':
        return { action: e.action, check_suite: this.checkSuite(repo, e.checkSuiteId, e.headSha, e.appId) };
      case 'status': {
        const s = state.statuses.find((x) => x.id === e.id)!;
        const branches = [...repo.refs.entries()]
          .filter(([ref, sha]) => ref.startsWith('refs/heads/') && sha === s.sha)
          .map(([ref, sha]) => ({ name: ref.slice('refs/heads/'.length), commit: { sha, url: `${shapes.api}/repos/${repo.fullName}/commits/${sha}` }, protected: repo.protection.has(ref.slice(11)) }));
        return {
          id: s.id,
          sha: s.sha,
          name: repo.fullName,
          target_url: s.targetUrl,
          context: s.context,
          description: s.description,
          state: s.state,
          commit: shapes.commit(repo, state.getCommit(s.sha)),
          branches,
          created_at: s.createdAt,
          updated_at: s.createdAt,
        };
      }
    }
  }

  private push(e: Extract<FakeEvent, { name: 'push' }>, repo: Repo): Payload {
    const { state, shapes } = this;
    const zero = '0'.repeat(40);
    const commitJson = (sha: string) => {
      const c = state.getCommit(sha);
      const person = { name: c.author, email: `${c.author}@users.noreply.github.com`, username: c.author };
      return { id: c.sha, tree_id: treeSha(c.tree), distinct: true, message: c.message, timestamp: c.date, url: `${shapes.web}/${repo.fullName}/commit/${c.sha}`, author: person, committer: person, ...state.filesChangedBy(repo, c.sha) };
    };
    const commits = e.deleted ? [] : e.created ? [e.after] : commitsBetween(state.commits, e.before, e.after).map((c) => c.sha);
    const sender = state.user(e.sender);
    return {
      ref: e.ref,
      before: e.before,
      after: e.after,
      created: e.created,
      deleted: e.deleted,
      forced: e.forced,
      base_ref: null,
      compare: `${shapes.web}/${repo.fullName}/compare/${e.before.slice(0, 12)}...${e.after.slice(0, 12)}`,
      commits: commits.map(commitJson),
      head_commit: e.after === zero ? null : commitJson(e.after),
      pusher: { name: sender.login, email: `${sender.login}@users.noreply.github.com` },
    };
  }

  private checkSuite(repo: Repo, id: number, headSha: string, appId: number): Payload {
    const { state, shapes } = this;
    const { status, conclusion } = state.checkSuiteConclusion(id);
    const branch = [...repo.refs.entries()].find(([ref, sha]) => ref.startsWith('refs/heads/') && sha === headSha)?.[0].slice('refs/heads/'.length) ?? null;
    const app = state.apps.get(appId);
    return {
      id,
      node_id: shapes.nodeId('CheckSuite', id),
      head_branch: branch,
      head_sha: headSha,
      status,
      conclusion,
      url: `${shapes.api}/repos/${repo.fullName}/check-suites/${id}`,
      before: null,
      after: headSha,
      pull_requests: [...repo.pulls.values()].filter((p) => p.state === 'open' && !p.fromFork && p.headSha === headSha).map((p) => shapes.pullMinimal(repo, p)),
      app: app ? shapes.app(app) : null,
      created_at: state.now(),
      updated_at: state.now(),
      check_runs_url: `${shapes.api}/repos/${repo.fullName}/check-suites/${id}/check-runs`,
      head_commit: { id: headSha, tree_id: treeSha(state.getCommit(headSha).tree), message: state.getCommit(headSha).message, timestamp: state.getCommit(headSha).date },
    };
  }
}

/** A delivery as GitHub lists it: its status code (0 when the receiver could not be reached) and GitHub's words for it. */
function hookAttempt(d: Delivery): HookAttempt {
  const id = (key: string) => {
    const value = (d.payload[key] as Payload | undefined)?.id;
    return typeof value === 'number' ? value : null;
  };
  const statusCode = d.status ?? 0;
  const status = d.status === undefined ? 'failed to connect' : statusCode >= 200 && statusCode < 300 ? 'OK' : `Invalid HTTP Response: ${statusCode}`;
  return { guid: d.id, at: d.at, event: d.event, action: d.action ?? null, statusCode, status, installationId: id('installation'), repositoryId: id('repository') };
}
