import { createHash } from 'node:crypto';
import { carelessShares, DEFAULT_AUTHOR_POOL } from '../../src/simulation/authors.js';
import { BREAKING_SIZE_FACTOR, MEDIAN_CHANGED_FILES } from '../../src/simulation/pr-size.js';
import { riskCorrelation } from '../../src/simulation/risk-hint.js';
import { DAY, generateWorkload, HOUR, type WorkloadSpec } from '../../src/simulation/workload.js';

const spec: WorkloadSpec = {
  name: 'stream',
  description: 'x',
  prCount: 400,
  arrivalsPerHour: 8,
  breakRate: 0.1,
  runFlakeRate: 0.02,
  ci: { meanMinutes: 30, jitterMinutes: 5 },
  targetGroups: 4,
  conflictRate: 0.05,
  mergeMinutes: 0.25,
};

/** The PR stream without its hints, authors and sizes, hashed: arrivals, breakage, targets and conflicts. */
function fingerprint(seed: number, over: Partial<WorkloadSpec> = {}): string {
  const workload = generateWorkload({ ...spec, ...over }, seed);
  const prs = workload.prs.map(({ riskHint: _hint, author: _author, changedFiles: _files, ...pr }) => pr);
  return createHash('sha256').update(JSON.stringify({ prs, conflicts: workload.conflicts })).digest('hex').slice(0, 16);
}

test('risk hints and authors leave the PR stream as it was before them', () => {
  // Hashes of the generator's output before risk hints and authors existed.
  expect([1, 2, 3].map((seed) => fingerprint(seed))).toEqual(['de54bcb5e938699e', '028120fc9bdb1ba4', '05c6c642eade4eb0']);
  // Whatever the pool of authors, the same stream.
  expect(fingerprint(1, { authors: { count: 3, carelessShare: 0.5, carelessBreakShare: 0.9 } })).toBe('de54bcb5e938699e');
  // Whatever the hints' quality too: bench:queue's hint study compares ours on the same stream.
  expect(fingerprint(1, { riskSeparation: 3 })).toBe('de54bcb5e938699e');
});

/** The first three authors and hints of seed 2, generated before PRs had sizes. */
const authorsBeforeSizes = ['a37', 'a32', 'a3'];
const hintsBeforeSizes = ['0.032895', '0.037658', '0.111356'];

test('sizes leave hints and authors as they were; breaking PRs are bigger, by the stated factor', () => {
  // Hints and authors of seed 2 as they were before sizes existed (their first values).
  const prs = generateWorkload(spec, 2).prs;
  expect(prs.slice(0, 3).map((p) => p.author)).toEqual(authorsBeforeSizes);
  expect(prs.slice(0, 3).map((p) => p.riskHint.toFixed(6))).toEqual(hintsBeforeSizes);
  const many = generateWorkload({ ...spec, prCount: 20_000 }, 1).prs;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const sound = median(many.filter((p) => !p.breaks).map((p) => p.changedFiles));
  const breaking = median(many.filter((p) => p.breaks).map((p) => p.changedFiles));
  expect(sound).toBe(MEDIAN_CHANGED_FILES);
  expect(Math.abs(breaking - MEDIAN_CHANGED_FILES * BREAKING_SIZE_FACTOR)).toBeLessThanOrEqual(1);
  expect(many.every((p) => Number.isInteger(p.changedFiles) && p.changedFiles >= 1)).toBe(true);
});

test('authors leave the risk hints as they were, and are the same for the same seed', () => {
  const hints = (authors = DEFAULT_AUTHOR_POOL) => generateWorkload({ ...spec, authors }, 2).prs.map((p) => p.riskHint);
  expect(hints({ count: 3, carelessShare: 0.5, carelessBreakShare: 0.9 })).toEqual(hints());
  const authors = (seed: number) => generateWorkload(spec, seed).prs.map((p) => p.author);
  expect(authors(4)).toEqual(authors(4));
  expect(authors(4)).not.toEqual(authors(5));
});

test('a fifth of the authors write about a fifth of the PRs and half of the breaking ones', () => {
  for (const breakRate of [0.02, 0.1, 0.3]) {
    const prs = generateWorkload({ ...spec, prCount: 20_000, breakRate }, 1).prs;
    const shares = carelessShares(prs, DEFAULT_AUTHOR_POOL);
    expect(Math.abs(shares.prs - 0.2)).toBeLessThan(0.015);
    expect(Math.abs((shares.breaking ?? 0) - 0.5)).toBeLessThan(breakRate < 0.05 ? 0.08 : 0.03);
    expect(new Set(prs.map((p) => p.author)).size).toBe(DEFAULT_AUTHOR_POOL.count);
  }
  // At a break rate too high for a fifth of the PRs to hold half the breaking ones, the careless write only breaking PRs.
  const prs = generateWorkload({ ...spec, prCount: 5000, breakRate: 0.6 }, 1).prs;
  expect(prs.filter((p) => !p.breaks).every((p) => Number(p.author.slice(1)) >= 8)).toBe(true);
});

test('risk hints are calibrated: their mean is the break rate', () => {
  for (const breakRate of [0.02, 0.1, 0.3]) {
    const prs = generateWorkload({ ...spec, prCount: 20_000, breakRate }, 1).prs;
    const meanHint = prs.reduce((s, p) => s + p.riskHint, 0) / prs.length;
    expect(Math.abs(meanHint - breakRate)).toBeLessThan(0.1 * breakRate + 0.003);
    // Among PRs hinted above 0.5, more than half break.
    const risky = prs.filter((p) => p.riskHint > 0.5);
    if (risky.length > 50) expect(risky.filter((p) => p.breaks).length / risky.length).toBeGreaterThan(0.5);
  }
});

test('hints correlate with breakage, more as the signal separates breaking PRs better', () => {
  const r = [0.5, 1.5, 3].map((riskSeparation) => riskCorrelation(generateWorkload({ ...spec, prCount: 5000, riskSeparation }, 2).prs) ?? 0);
  expect(r[0]).toBeGreaterThan(0);
  expect(r[1]).toBeGreaterThan(r[0] as number);
  expect(r[2]).toBeGreaterThan(r[1] as number);
  // No signal: every hint is the prior, nothing to correlate (null, or zero up to rounding).
  expect(Math.abs(riskCorrelation(generateWorkload({ ...spec, riskSeparation: 0 }, 2).prs) ?? 0)).toBeLessThan(1e-9);
});

test('hints are the same for the same seed, and differ for another', () => {
  const hints = (seed: number) => generateWorkload(spec, seed).prs.map((p) => p.riskHint);
  expect(hints(4)).toEqual(hints(4));
  expect(hints(4)).not.toEqual(hints(5));
});

test('a morning burst brings about half of each day in two hours, the daily mean unchanged', () => {
  const burst = generateWorkload({ ...spec, prCount: 4000, morningBurst: { hours: 2, share: 0.5 } }, 3).prs;
  const inMorning = burst.filter((p) => p.arrivesAt % DAY < 2 * HOUR).length / burst.length;
  expect(inMorning).toBeGreaterThan(0.45);
  expect(inMorning).toBeLessThan(0.55);
  const days = Math.ceil((burst.at(-1)?.arrivesAt ?? 0) / DAY);
  // 4000 PRs at 8/h are about 20.8 days.
  expect(days).toBeGreaterThanOrEqual(20);
  expect(days).toBeLessThanOrEqual(22);
  expect(burst.every((p, i) => i === 0 || p.arrivesAt >= (burst[i - 1]?.arrivesAt ?? 0))).toBe(true);
});
