/** A task run every few seconds; failures are logged and the next round tries again. */
export interface MaintenanceTask {
  name: string;
  run(): Promise<unknown>;
}

/**
 * Periodic catch-up work that events alone cannot guarantee: facts a host
 * computes lazily, check results whose webhook was missed, old delivery ids.
 */
export class Maintenance {
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly tasks: MaintenanceTask[],
    private readonly log: { warn(details: object, message: string): void },
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.round(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over every task (also what tests call). A slow pass is never overlapped. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const task of this.tasks) {
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
