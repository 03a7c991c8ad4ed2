import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * The generic half of webhooks, usable without a fake: GitHub's example payloads
 * (`@octokit/webhooks-examples`), a deep merge to override what matters, and a
 * delivery signed exactly as GitHub signs it.
 */

export type Payload = Record<string, unknown>;

export interface WebhookTarget {
  url: string;
  secret: string;
}

export interface Delivery {
  /** `x-github-delivery`: reuse one to simulate GitHub's redelivery. */
  id: string;
  event: string;
  action?: string;
  payload: Payload;
  /** The exact bytes sent (and signed). */
  body: string;
  headers: Record<string, string>;
  /** When it was made (ISO 8601), as GitHub's list of the App's deliveries shows it. */
  at: string;
  /** The receiver's answer; undefined when the connection failed (see `error`). */
  status?: number;
  responseBody?: string;
  error?: string;
}

interface ExampleSet {
  name: string;
  actions: string[];
  examples: Payload[];
}

const require = createRequire(import.meta.url);
let examples: ExampleSet[] | undefined;

function allExamples(): ExampleSet[] {
  examples ??= require('@octokit/webhooks-examples') as ExampleSet[];
  return examples;
}

/**
 * A fresh copy of GitHub's example payload for an event (and action), preferring one
 * sent to an app installation. Throws when the examples have none: a typo in an event
 * name should fail the test, not send an empty payload.
 */
export function findExample(event: string, action?: string): Payload {
  const set = allExamples().find((s) => s.name === event);
  if (!set) throw new Error(`fake-github: @octokit/webhooks-examples has no "${event}" event`);
  const candidates = set.examples.filter((e) => action === undefined || e.action === action);
  const chosen = candidates.find((e) => 'installation' in e) ?? candidates[0] ?? (action !== undefined && set.actions.includes(action) ? set.examples[0] : undefined);
  if (!chosen) throw new Error(`fake-github: no "${event}" example with action "${action}" (actions: ${set.actions.join(', ') || 'none'})`);
  const copy = structuredClone(chosen);
  if (action !== undefined) copy.action = action;
  return copy;
}

/** Objects merge key by key; arrays, primitives and null replace. `undefined` deletes. */
export function deepMerge(base: Payload, override: Payload): Payload {
  const out: Payload = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    if (value === undefined) delete out[key];
    else if (isObject(value) && isObject(current)) out[key] = deepMerge(current, value);
    else out[key] = value;
  }
  return out;
}

/** `x-hub-signature-256` for a body: HMAC-SHA256 of the exact bytes with the webhook secret. */
export function signatureFor(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs a payload as GitHub does. Never throws: a failed delivery is recorded in the result. */
export async function deliver(
  target: WebhookTarget,
  event: string,
  payload: Payload,
  options: { deliveryId?: string; appId?: number; body?: string } = {},
): Promise<Delivery> {
  const body = options.body ?? JSON.stringify(payload);
  const id = options.deliveryId ?? randomUUID();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/fake-github',
    'x-github-event': event,
    'x-github-delivery': id,
    'x-github-hook-id': '1',
    'x-hub-signature': `sha1=${createHmac('sha1', target.secret).update(body).digest('hex')}`,
    'x-hub-signature-256': signatureFor(target.secret, body),
    ...(options.appId !== undefined ? { 'x-github-hook-installation-target-type': 'integration', 'x-github-hook-installation-target-id': String(options.appId) } : {}),
  };
  const delivery: Delivery = { id, event, action: typeof payload.action === 'string' ? payload.action : undefined, payload, body, headers, at: new Date().toISOString() };
  try {
    const response = await fetch(target.url, { method: 'POST', headers, body });
    delivery.status = response.status;
    delivery.responseBody = await response.text();
  } catch (error) {
    delivery.error = error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}` : String(error);
  }
  return delivery;
}

function isObject(value: unknown): value is Payload {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
