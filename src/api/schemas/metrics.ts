import { z } from 'zod';

/** `repo` is `owner/name` and needs `repoHost`; without both, the whole organization. */
export const metricsQuery = z
  .object({
    repo: z
      .string()
      .regex(/^[^\s/]+\/[^\s/]+$/, 'must be owner/name')
      .max(201)
      .optional(),
    repoHost: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be a host name such as github.com')
      .optional(),
  })
  .refine((q) => q.repo === undefined || q.repoHost !== undefined, {
    message: 'is required when repo is given',
    path: ['repoHost'],
  });
