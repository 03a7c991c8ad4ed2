import { z } from 'zod';
import { MAX_UINT32 } from '../../domain/queue-config.js';
import { FULL_SHA } from '../../domain/commit-sha.js';

/**
 * Building blocks shared by the v1 request schemas. Inputs are liberal (enum
 * values in any case, unknown fields ignored); every constraint names the field.
 */

/** An enum whose input is matched case-insensitively and whose output is canonical. */
export function caseInsensitiveEnum<const T extends readonly [string, ...string[]]>(values: T, canonical: (v: string) => string) {
  return z
    .preprocess((v) => (typeof v === 'string' ? canonical(v) : v), z.enum(values))
    .describe(`One of ${values.join(', ')} (any letter case).`);
}

const lower = (v: string) => v.toLowerCase();
const upper = (v: string) => v.toUpperCase();
export const lowerCaseEnum = <const T extends readonly [string, ...string[]]>(values: T) => caseInsensitiveEnum(values, lower);
export const upperCaseEnum = <const T extends readonly [string, ...string[]]>(values: T) => caseInsensitiveEnum(values, upper);

// Names as GitHub allows them, without a slash or whitespace: they become path
// segments and database keys. Control characters are refused on purpose.
/* eslint-disable no-control-regex */
const segment = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\s/\\\u0000-\u001f\u007f]+$/, 'must not contain slashes, whitespace or control characters');

export const repoSchema = z
  .object({
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be a host name such as github.com'),
    owner: segment(100),
    name: segment(100),
  })
  .describe('The repository: its host, owner (organization) and name.');

/** A git branch name: the rules of git check-ref-format that matter for a queue. */
export const branchSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s~^:?*[\\\u0000-\u001f\u007f]+$/, 'must be a valid git branch name')
  .refine((b) => !b.startsWith('/') && !b.endsWith('/') && !b.endsWith('.') && !b.endsWith('.lock'), 'must be a valid git branch name')
  .refine((b) => !b.includes('..') && !b.includes('//') && !b.includes('@{') && !b.startsWith('-'), 'must be a valid git branch name');

/* eslint-enable no-control-regex */

/** Decimal numbers written as strings ("12", "-1", "1.5"): read as numbers, so the range and integer checks name the problem. */
const DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;

/**
 * An integer in [min, max], given as a JSON number or, as real CI clients send
 * them, as a string of digits ("12"). Anything else ("12a", 1.5, "-1", "") is
 * refused with a sentence naming the field. The range comes before int(): int()
 * also checks the safe-integer range, and the first issue is the one the 400
 * names, so 1e20 reads "at most 2147483647", not "at most 2^53-1".
 */
export function integer(min: number, max: number) {
  return z.preprocess((v) => (typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v), z.number().min(min).max(max).int());
}

export const prNumberSchema = integer(1, 2147483647).describe('The pull request number (an integer, or a string of digits).');

/** A full commit sha (see FULL_SHA), lower-cased. */
export const shaSchema = z
  .string()
  .regex(FULL_SHA, 'must be the full commit sha (40 hexadecimal characters, or 64 for SHA-256), not an abbreviated one')
  .transform((s) => s.toLowerCase());

export const uint32 = (min: 0 | 1) => integer(min, MAX_UINT32);

/** Identity of a queue: every queue-level request carries it. */
export const queueIdentity = {
  repo: repoSchema,
  targetBranch: branchSchema,
};

export const isoDateTime = z.iso.datetime({ offset: true });
