import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a body with every live secret: during a rotation's grace period the
 * header carries one `v1,<sig>` per secret, space-separated, so receivers on
 * either secret verify it with a stock library.
 */
export function signDelivery(input: { messageId: string; at: Date; body: string; secrets: readonly string[] }): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('no signing secret');
  const signatures = input.secrets.map((secret) => new Webhook(secret).sign(input.messageId, input.at, input.body));
  return {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
