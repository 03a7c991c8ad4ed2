import { standardNormal, type Rng } from './random.js';

/** How far apart, in standard deviations, the risk signal of breaking and of sound PRs lies by default. */
export const DEFAULT_RISK_SEPARATION = 1.5;

/**
 * The probability that a PR breaks as a calibrated predictor would state it.
 * What the service knows before testing (the PR's own CI, the files and
 * targets it touches, its author's recent ejections) is summed up as a signal
 * ~ Normal(separation, 1) for breaking PRs and Normal(0, 1) for sound ones;
 * the hint is the posterior P(breaks | signal) with the break rate as prior,
 * so among PRs hinted at 0.3 about 30% do break.
 */
export function riskHint(breaks: boolean, breakRate: number, separation: number, rng: Rng): number {
  const signal = standardNormal(rng) + (breaks ? separation : 0);
  if (breakRate <= 0 || breakRate >= 1) return breakRate <= 0 ? 0 : 1;
  // Likelihood ratio of the two normals: φ(s − d) / φ(s) = exp(d·s − d²/2).
  const logOdds = Math.log(breakRate / (1 - breakRate)) + separation * signal - (separation * separation) / 2;
  return 1 / (1 + Math.exp(-logOdds));
}

/**
 * Point-biserial correlation between hints and the truth (Pearson's r with
 * breaking as 1): how much a predictor's hints tell about the stream. Null
 * when either side does not vary.
 */
export function riskCorrelation(prs: ReadonlyArray<{ riskHint: number; breaks: boolean }>): number | null {
  const n = prs.length;
  if (n === 0) return null;
  const meanHint = prs.reduce((s, p) => s + p.riskHint, 0) / n;
  const meanBreak = prs.filter((p) => p.breaks).length / n;
  let covariance = 0;
  let hintVariance = 0;
  for (const p of prs) {
    const dh = p.riskHint - meanHint;
    covariance += dh * ((p.breaks ? 1 : 0) - meanBreak);
    hintVariance += dh * dh;
  }
  const breakVariance = n * meanBreak * (1 - meanBreak);
  return hintVariance > 0 && breakVariance > 0 ? covariance / Math.sqrt(hintVariance * breakVariance) : null;
}
