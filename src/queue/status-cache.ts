import { LRUCache } from 'lru-cache';
import { isTerminal } from '../domain/pull-request-state.js';
import type { ImpactedTargetsRecord, QueueEntryRecord } from '../domain/records.js';
import type { RecordedChange } from '../runner/runner-model.js';

/** What a PR's status read shows: its entry and the impacted targets its view counts. */
export interface PullRequestStatus {
  entry: QueueEntryRecord;
  targets: ImpactedTargetsRecord | null;
}

/** Whether this replica writes a queue: the same object for as long as it holds the lease without a break, else null. */
export interface QueueWriterTenure {
  writerTenure(queueId: string): object | null;
}

interface Kept {
  status: PullRequestStatus;
  tenure: object;
}

/**
 * The status of the enqueued PRs of queues this replica writes, kept in memory:
 * a CI client polling a PR's status costs no read of the database (the entry and
 * its targets were two reads a poll, the most frequent request there is). A PR
 * submitted here is kept from its submit on (`submitted`): its first poll reads nothing either.
 *
 * Sound because the runner is the only writer of entries, and each decision it
 * records here names the entries it wrote and the PRs whose uploaded targets it
 * took in (`recorded`, before anyone is answered): while this replica holds the
 * queue's lease without a break (the same tenure), nothing else changes what a
 * kept status shows. Another replica's writes are never heard of here, so a
 * status is kept only with the tenure it was read under, and used only while
 * that tenure lasts. A read during which a decision named its entry is not kept
 * (it may have read the entry before the decision wrote it). Ended PRs are not
 * kept: an upload for one is stored without any decision. Nor are NOT_READY
 * ones: they wait for what a client sends (targets uploaded through another
 * replica are stored at once, and decided only at the writer's next inbox poll),
 * and the answer right after an upload must show it.
 */
export class PullRequestStatusCache {
  private readonly kept: LRUCache<string, Kept>;
  /** The key each kept entry is under (decisions name entries by id). */
  private readonly keyOfEntry = new Map<string, string>();
  /** Decisions recorded here so far, and when each entry (`e:id`) or PR's targets (`p:queue:pr`) were last named by one. */
  private decisions = 0;
  private readonly namedAt: LRUCache<string, number>;
  /** Namings forgotten (the oldest, past `max`) up to this count: a read begun before it cannot tell whether it was overlapped. */
  private forgottenThrough = 0;

  constructor(
    private readonly writer: QueueWriterTenure,
    /** The entry as this process's runner last wrote it (current while it writes the queue), if it remembers it. */
    private readonly lastWritten: (entryId: string) => QueueEntryRecord | null = () => null,
    options: { max?: number } = {},
  ) {
    const max = options.max ?? 20_000;
    this.kept = new LRUCache<string, Kept>({
      max,
      dispose: (value, key) => {
        if (this.keyOfEntry.get(value.status.entry.id) === key) this.keyOfEntry.delete(value.status.entry.id);
      },
    });
    this.namedAt = new LRUCache<string, number>({
      max: max * 5,
      dispose: (at, _key, reason) => {
        if (reason === 'evict') this.forgottenThrough = Math.max(this.forgottenThrough, at);
      },
    });
  }

  /** The PR's status: kept, or read by `load` (and kept when it may be). */
  async read(queueId: string, prNumber: number, load: () => Promise<PullRequestStatus | null>): Promise<PullRequestStatus | null> {
    const mark = this.mark(queueId);
    if (mark.tenure === null) return load();
    const key = prKey(queueId, prNumber);
    const kept = this.kept.get(key);
    if (kept?.tenure === mark.tenure) return kept.status;
    const status = await load();
    // A read overlapped by a decision naming its entry may have read the entry before the decision wrote it.
    if (status) this.keep(mark, key, status, [`e:${status.entry.id}`, `p:${key}`]);
    return status;
  }

  /** Where a read or a submit begins (a submit: before it reads the PR's targets): the decisions since are checked against it. */
  mark(queueId: string): StatusMark {
    return { queueId, decisions: this.decisions, tenure: this.writer.writerTenure(queueId) };
  }

  /**
   * A PR this replica just submitted, its submit decided here and its head known to have no targets: kept as the
   * runner's own copy of its entry (current while this replica writes the queue), so a CI client's first poll after
   * its submit reads nothing. Not kept if, since `mark`, a decision took in targets for the PR (an upload through
   * another replica, decided in the submit's round or after it), the tenure changed (a new writer's replayed
   * decisions are not told here), or namings were forgotten; nor where the runner's copy is gone. (An upload another
   * replica stored between the submit's read of targets and its claim is told to no one, the engine included: the
   * engine decides with the targets the submit read, and so does this status.)
   */
  submitted(mark: StatusMark, prNumber: number, entryId: string): void {
    const written = this.lastWritten(entryId);
    // The runner's copy is current: only an upload decided since the mark can make it show too little.
    if (written && written.prNumber === prNumber) this.keep(mark, prKey(mark.queueId, prNumber), { entry: written, targets: null }, [`p:${prKey(mark.queueId, prNumber)}`]);
  }

  /** Keeps a status read or written since `mark`, unless it may not be kept or a decision since named one of `names`. */
  private keep(mark: StatusMark, key: string, status: PullRequestStatus, names: string[]): void {
    if (mark.tenure === null || this.writer.writerTenure(mark.queueId) !== mark.tenure || !mayKeep(status.entry)) return;
    if (this.forgottenThrough > mark.decisions || names.some((named) => (this.namedAt.get(named) ?? 0) > mark.decisions)) return;
    this.kept.set(key, { status, tenure: mark.tenure });
    this.keyOfEntry.set(status.entry.id, key);
  }

  /**
   * A decision this replica's runner recorded: a kept entry it wrote takes the runner's copy (its targets stay
   * while its head does); one the runner no longer remembers, or whose targets may have changed, is read again.
   */
  recorded(change: RecordedChange): void {
    const at = ++this.decisions;
    const uploaded = new Set(change.targetsOf);
    for (const prNumber of uploaded) {
      this.namedAt.set(`p:${prKey(change.queueId, prNumber)}`, at);
      this.kept.delete(prKey(change.queueId, prNumber));
    }
    for (const entryId of change.entryIds) {
      this.namedAt.set(`e:${entryId}`, at);
      const key = this.keyOfEntry.get(entryId);
      const kept = key === undefined ? undefined : this.kept.peek(key);
      if (key === undefined || !kept) continue;
      const written = this.lastWritten(entryId);
      if (written && mayKeep(written) && written.facts?.headSha === kept.status.entry.facts?.headSha) {
        this.kept.set(key, { status: { entry: written, targets: kept.status.targets }, tenure: kept.tenure });
        this.keyOfEntry.set(entryId, key);
      } else this.kept.delete(key);
    }
  }
}

/** Where a status read or a submit began (PullRequestStatusCache.mark). */
export interface StatusMark {
  queueId: string;
  decisions: number;
  tenure: object | null;
}

/** Whether an entry's status may be kept (see the class). */
function mayKeep(entry: QueueEntryRecord): boolean {
  return !isTerminal(entry.state) && entry.state !== 'NOT_READY';
}

function prKey(queueId: string, prNumber: number): string {
  return `${queueId}:${prNumber}`;
}
