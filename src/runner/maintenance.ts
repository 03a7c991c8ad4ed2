/** A task run every few seconds; failures are logged and the next round tries again. */
export interface MaintenanceTask {
  name: string;
  run(): Promise<unknown>;
  /** Run at most this often (ms), for tasks that spend a host's API budget; default every round. */
  everyMs?: number;
}

/**
 * Periodic catch-up work that events alone cannot guarantee: facts a host
 * computes lazily, check results whose webhook was missed, old delivery ids.
 */
export class Maintenance {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private readonly lastRun = new Map<MaintenanceTask, number>();

  constructor(
    private readonly tasks: MaintenanceTask[],
    private readonly log: { warn(details: object, message: string): void },
    private readonly now: () => number = Date.now,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.round(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over every task due (`all`: every task now, as tests ask). A slow pass is never overlapped. */
  async round(options: { all?: boolean } = {}): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const task of this.tasks) {
        const last = this.lastRun.get(task);
        if (!options.all && task.everyMs !== undefined && last !== undefined && this.now() - last < task.everyMs) continue;
        this.lastRun.set(task, this.now());
        try {
          await task.run();
        } catch (error) {
          this.log.warn({ err: error, task: task.name }, 'maintenance task failed');
        }
      }
    } finally {
      this.running = false;
    }
  }
}
