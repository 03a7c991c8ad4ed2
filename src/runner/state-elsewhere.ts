import type { EngineState } from '../engine/model.js';
import type { CiHistory } from '../forecast/ci-history.js';
import { forecastMerges } from '../forecast/merge-forecast.js';
import type { EngineStore } from '../ports/engine-store.js';
import { RecordedMemo } from '../concurrency/recorded-memo.js';
import { loadState } from './decide-inputs.js';
import type { QueueForecast } from './queue-runner.js';
import { runsInFlight, type RunsInFlight } from './runs-in-flight.js';

/** How long a state loaded for a queue another replica writes is answered from memory at most. */
const MAX_AGE_MS = 60_000;

interface Loaded {
  state: EngineState | null;
  forecast?: Promise<QueueForecast>;
}

/**
 * The engine state of queues whose writer is another replica, as this replica last loaded it to answer a
 * status read or a board. Loading replays the queue's snapshot and log (the whole state: about 1.4 MB at
 * 5,000 PRs), which a read per request would pay every time; kept, a read costs one cursor read by id, and
 * the state is loaded again once the writer has recorded a decision since, or after a minute. Requests that arrive
 * together after a decision (64 status reads) share one load (found by a cost review).
 */
export class StateElsewhere {
  private readonly loaded: RecordedMemo<Loaded>;

  constructor(
    private readonly engine: Pick<EngineStore, 'cursors' | 'load'>,
    private readonly ciHistory: (queueId: string) => Promise<{ history: CiHistory; samples: number }>,
    private readonly now: () => number,
  ) {
    this.loaded = new RecordedMemo<Loaded>(MAX_AGE_MS, now);
  }

  private current(queueId: string): Promise<Loaded> {
    return this.loaded.get(this.engine, queueId, async () => {
      const stored = await this.engine.load(queueId);
      return { state: stored ? loadState(stored.snapshot, stored.decisions) : null };
    });
  }

  /** The queue's state (a copy the caller may keep), or null for a queue with none stored. */
  async state(queueId: string): Promise<EngineState | null> {
    const { state } = await this.current(queueId);
    return state ? structuredClone(state) : null;
  }

  /** Its runs in flight (a copy of them only). */
  async runsInFlight(queueId: string): Promise<RunsInFlight | null> {
    const { state } = await this.current(queueId);
    return state ? runsInFlight(state) : null;
  }

  /** Forecast merge times from that state, computed once per load. */
  async forecast(queueId: string): Promise<QueueForecast> {
    const loaded = await this.current(queueId);
    if (!loaded.forecast) {
      // Shared by the requests that ask while it is computed, like the load.
      const forecast = (async () => {
        const { history, samples } = await this.ciHistory(queueId);
        return { byEntry: loaded.state ? forecastMerges(loaded.state, history, this.now()) : new Map(), history, samples };
      })();
      loaded.forecast = forecast;
      // A failed read of the history is not kept: the next request asks again.
      forecast.catch(() => {
        if (loaded.forecast === forecast) delete loaded.forecast;
      });
    }
    return loaded.forecast;
  }
}
