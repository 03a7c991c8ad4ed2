import { z } from 'zod';

/** Sign-in to the dashboard: an organization API token, as `mq token create` printed it. */
export const createSessionRequest = z.object({
  token: z.string().min(1).max(200).describe('An organization API token (mq_...).'),
});

/** What the dashboard learns about its session; the session id itself stays in the HttpOnly cookie. */
export const sessionView = z.object({
  organization: z.object({ host: z.string(), owner: z.string() }),
  csrfToken: z.string().describe('Send it back in x-csrf-token on every request that changes something.'),
  expiresAt: z.string(),
});
