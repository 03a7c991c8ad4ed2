/**
 * A queue file over the files it extends: later files win, lists are replaced, and a queue's tuning follows the
 * later file as updateQueue would take it (found by review: an inherited `batch` made a repository's
 * `tuning: adaptive` unreadable).
 */
import { mergeQueueFiles } from '../../src/queue-file/merge-queue-files.js';
import { checkQueueFile } from '../../src/queue-file/read-queue-file.js';

const org = { queues: { main: { tuning: 'fixed', batch: true, batchingMinSize: 4, requiredStatuses: ['ci', 'lint'], concurrency: 2 } } };

test('later settings win and lists are replaced', () => {
  expect(mergeQueueFiles([org, { queues: { main: { concurrency: 5, requiredStatuses: ['unit'] } } }])).toEqual({
    queues: { main: { tuning: 'fixed', batch: true, batchingMinSize: 4, requiredStatuses: ['unit'], concurrency: 5 } },
  });
});

test('a repository choosing adaptive drops the tuned settings it inherits, and the file reads', () => {
  const merged = mergeQueueFiles([org, { queues: { main: { tuning: 'ADAPTIVE' } } }]);
  expect(merged).toEqual({ queues: { main: { tuning: 'ADAPTIVE', requiredStatuses: ['ci', 'lint'], concurrency: 2 } } });
  expect(checkQueueFile(merged).ok).toBe(true);
});

test('a repository giving a tuned setting over an adaptive base fixes the tuning, as updateQueue does', () => {
  const merged = mergeQueueFiles([{ queues: { main: { tuning: 'adaptive' } } }, { queues: { main: { batch: true } } }]);
  expect(merged).toEqual({ queues: { main: { batch: true } } });
  expect(checkQueueFile(merged).ok).toBe(true);
});

test('a file that says both itself is still refused, naming the setting', () => {
  const merged = mergeQueueFiles([org, { queues: { main: { tuning: 'adaptive', batch: false } } }]);
  const reading = checkQueueFile(merged);
  expect(reading.ok ? [] : reading.problems.map((p) => p.path)).toEqual(['queues.main.batch']);
});
