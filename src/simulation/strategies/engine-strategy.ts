import type { QueueConfig } from '../../domain/queue-config.js';
import { assertNever } from '../../engine/assert-never.js';
import { decide } from '../../engine/decide.js';
import { initialEngineState } from '../../engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState } from '../../engine/model.js';
import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

const entryId = (n: number) => `e${n}`;
const prOf = (id: string) => Number(id.slice(1));

/**
 * Our engine, driven through decide() exactly as the runner drives it: every
 * callback becomes an event, every action is carried out on the host.
 */
export class EngineStrategy implements Strategy {
  readonly seesFlakes = true;
  readonly usesLanes: boolean;
  private host!: SimHost;
  private state!: EngineState;
  /** Engine run id ↔ host run id: the host names runs its own way, as a real CI does. */
  private readonly toHost = new Map<string, string>();
  private readonly toEngine = new Map<string, string>();

  constructor(
    private readonly config: Partial<QueueConfig>,
    readonly name = 'ours',
    /** Give the engine each PR's risk hint (issue 12, point 3). */
    private readonly hints = false,
  ) {
    this.usesLanes = config.mode === 'parallel';
  }

  start(host: SimHost): void {
    this.host = host;
    this.state = initialEngineState('main', this.config, host.baseSha);
  }

  onArrival(pr: SimPr): void {
    const sha = `h${pr.number}`;
    this.send({
      type: 'submitted',
      entryId: entryId(pr.number),
      prNumber: pr.number,
      priority: 100,
      noBatch: false,
      // The author and the PR's size are facts the host gives (not hints): every row of ours knows them.
      facts: { headSha: sha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', author: pr.author, changedFiles: pr.changedFiles },
      ...(this.hints ? { risk: pr.riskHint } : {}),
      // Targets come with the PR: in a real repository CI computes them before the PR is queued.
      ...(this.usesLanes ? { targets: { sha, targets: pr.targets } } : {}),
    });
  }

  onRunFinished(hostRunId: string, outcome: CiOutcome): void {
    const runId = this.toEngine.get(hostRunId);
    if (!runId) return;
    if (outcome.kind === 'conflict') this.send({ type: 'run_finished', runId, passed: false, conflictEntryId: entryId(outcome.prNumber) });
    else if (outcome.kind === 'passed') this.send({ type: 'run_finished', runId, passed: true });
    else this.send({ type: 'run_finished', runId, passed: false, failedChecks: ['ci/test'] });
  }

  onMergeFinished(result: MergeResult): void {
    const runId = this.toEngine.get(result.runId) ?? result.runId;
    if (result.ok) this.send({ type: 'merge_finished', runId, ok: true, newBaseSha: result.newBaseSha });
    else this.send({ type: 'merge_finished', runId, ok: false, reason: result.reason });
  }

  onTimer(): void {
    this.send({ type: 'tick' });
  }

  private send(event: EngineEvent): void {
    const decision = decide(this.state, event, this.host.now);
    this.state = decision.state;
    for (const action of decision.actions) this.execute(action);
  }

  private execute(action: EngineAction): void {
    switch (action.type) {
      case 'start_run': {
        const prs = [...action.run.ahead, ...action.run.unit].map((h) => prOf(h.entryId));
        const direct = action.run.direct && prs.length === 1 ? this.host.runWithoutCi(action.run.baseSha, prs[0] as number) : null;
        const hostRunId = direct ?? this.host.startRun(action.run.baseSha, prs);
        this.toHost.set(action.run.id, hostRunId);
        this.toEngine.set(hostRunId, action.run.id);
        return;
      }
      case 'cancel_run': {
        const hostRunId = this.toHost.get(action.runId);
        if (hostRunId) this.host.cancelRun(hostRunId);
        return;
      }
      case 'merge': {
        const hostRunId = this.toHost.get(action.runId) ?? action.runId;
        this.host.merge({ runId: hostRunId, expectedBaseSha: action.expectedBaseSha, prs: action.entryIds.map(prOf) });
        return;
      }
      case 'publish_status':
        if (action.state === 'FAILED' || action.state === 'CANCELLED') this.host.eject(action.prNumber, action.reason);
        return;
      case 'wake_at':
        this.host.wakeAt(action.at);
        return;
      case 'emit':
      case 'adopt_run': // The probe's host run goes on as the part's run: nothing to do on the host.
        return;
      default:
        assertNever(action);
    }
  }
}
