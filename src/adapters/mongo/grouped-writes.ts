/** How many writes one group sends at most. */
const MAX_GROUP = 500;

/**
 * Writes to one collection from many concurrent callers, sent as one command
 * per turn of the event loop (a group commit): inserts as one insertMany,
 * idempotent updates (a status set by _id) as one bulk write. On the local
 * FerretDB a document inserted in a group of 25 costs about a ninth of one
 * inserted alone (13,600 against 1,570 documents/s at 64 concurrent callers),
 * and every command also costs this service a socket write.
 *
 * Groups go one after another, in the order callers asked, so writes keep
 * their callers' order. A group that fails (a duplicate key among them, a
 * lost connection) is tried again one write at a time: each caller gets its
 * own write's outcome, and a document the group did insert before failing
 * answers as a duplicate of itself, which `isWritten` accepts (an idempotent
 * update is simply written again).
 */
export class GroupedWrites<T> {
  private waiting: Array<{ doc: T; resolve: () => void; reject: (error: unknown) => void }> = [];
  private sending: Promise<void> | null = null;

  constructor(
    private readonly writeGroup: (docs: T[]) => Promise<unknown>,
    private readonly writeOne: (doc: T) => Promise<unknown>,
    /** After a failed group, when writing this one alone failed too: whether the group wrote it already. */
    private readonly isWritten: (doc: T, error: unknown) => Promise<boolean> = async () => false,
  ) {}

  write(doc: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ doc, resolve, reject });
      this.sending ??= this.send();
    });
  }

  private async send(): Promise<void> {
    // Callers that arrive in the same turn (concurrent requests) join this group.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, MAX_GROUP);
      try {
        await (group.length === 1 ? this.writeOne((group[0] as (typeof group)[number]).doc) : this.writeGroup(group.map((g) => g.doc)));
        for (const g of group) g.resolve();
      } catch (error) {
        if (group.length === 1) (group[0] as (typeof group)[number]).reject(error);
        else for (const g of group) await this.writeAlone(g);
      }
    }
    this.sending = null;
  }

  private async writeAlone(caller: { doc: T; resolve: () => void; reject: (error: unknown) => void }): Promise<void> {
    try {
      await this.writeOne(caller.doc);
      caller.resolve();
    } catch (error) {
      if (await this.isWritten(caller.doc, error).catch(() => false)) caller.resolve();
      else caller.reject(error);
    }
  }
}
