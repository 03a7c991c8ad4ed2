/**
 * A seeded pseudo-random stream (mulberry32). The simulator never touches
 * Math.random: the same seed gives the same numbers on every machine, so a
 * benchmark run can be reproduced and compared across engine changes.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponentially distributed with this mean: the gaps of a Poisson process. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

/**
 * An independent stream derived from a seed and a label, so adding draws to
 * one part of the simulation (say, CI durations) does not shift another
 * (the PR stream).
 */
export function deriveRng(seed: number, label: string): Rng {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return new Rng(h);
}

/** A standard normal draw (Box-Muller): two uniforms per draw, whatever the values. */
export function standardNormal(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
