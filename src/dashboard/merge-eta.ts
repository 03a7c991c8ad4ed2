import type { QueueRecord, TestRunRecord } from '../domain/records.js';
import type { EngineState } from '../engine/model.js';
import type { Stores } from '../ports/stores.js';
import { ciHistoryOf, ciSamples, type CiHistory } from '../forecast/ci-history.js';
import { forecastMerges, type MergeForecast } from '../forecast/merge-forecast.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A queue's forecast merge times, from its engine state and the CI runs of the last day. */
export interface QueueEta {
  byEntry: MergeForecast;
  history: CiHistory;
  samples: number;
}

/** `finished`: the queue's runs finished in the last day, when the caller already read them. */
export async function queueEta(stores: Stores, queue: QueueRecord, state: EngineState | null, now: number, finished?: TestRunRecord[]): Promise<QueueEta> {
  const runs = finished ?? (await stores.testRuns.listFinishedSince(queue.id, new Date(now - DAY_MS)));
  const samples = ciSamples(runs);
  const history = ciHistoryOf(samples);
  return { byEntry: state ? forecastMerges(state, history, now) : new Map(), history, samples: samples.length };
}
