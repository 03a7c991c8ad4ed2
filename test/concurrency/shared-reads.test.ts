/**
 * Shared reads: concurrent callers of one key share the read under way; a
 * caller after it ends reads again (nothing is cached), and after `forget` a
 * read begun before is no longer shared.
 */
import { SharedReads } from '../../src/concurrency/shared-reads.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test('concurrent callers of one key share one read; other keys read on their own', async () => {
  const reads = new SharedReads<string, string>();
  const loads: string[] = [];
  const pending = deferred<string>();
  const load = (key: string) => () => {
    loads.push(key);
    return key === 'a' ? pending.promise : Promise.resolve(key);
  };
  const callers = [reads.read('a', load('a')), reads.read('a', load('a')), reads.read('b', load('b')), reads.read('a', load('a'))];
  pending.resolve('A');
  expect(await Promise.all(callers)).toEqual(['A', 'A', 'b', 'A']);
  expect(loads).toEqual(['a', 'b']);
});

test('nothing is kept once a read ends: the next caller reads again, also after a failure', async () => {
  const reads = new SharedReads<string, number>();
  let n = 0;
  expect(await reads.read('k', async () => ++n)).toBe(1);
  expect(await reads.read('k', async () => ++n)).toBe(2);
  await expect(reads.read('k', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(await reads.read('k', async () => ++n)).toBe(3);
});

test('after forget, a read under way is not shared: a revoked token is looked up afresh', async () => {
  const reads = new SharedReads<string, string>();
  const before = deferred<string>();
  const first = reads.read('token', () => before.promise);
  reads.forget();
  const second = reads.read('token', async () => 'revoked');
  before.resolve('active');
  expect(await first).toBe('active');
  expect(await second).toBe('revoked');
  // The first read ending does not drop the second's entry (still under way would be shared).
  const third = deferred<string>();
  const fourth = reads.read('x', () => third.promise);
  const fifth = reads.read('x', async () => 'other');
  third.resolve('same');
  expect(await fourth).toBe('same');
  expect(await fifth).toBe('same');
});
