import { createHash } from 'node:crypto';
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

/** The PR stream without its hints, hashed: arrivals, breakage, targets and conflicts. */
function fingerprint(seed: number): string {
  const workload = generateWorkload(spec, seed);
  const prs = workload.prs.map(({ riskHint: _hint, ...pr }) => pr);
  return createHash('sha256').update(JSON.stringify({ prs, conflicts: workload.conflicts })).digest('hex').slice(0, 16);
}

test('risk hints leave the PR stream as it was before them', () => {
  // Hashes of the generator's output before risk hints existed.
  expect([1, 2, 3].map(fingerprint)).toEqual(['de54bcb5e938699e', '028120fc9bdb1ba4', '05c6c642eade4eb0']);
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
