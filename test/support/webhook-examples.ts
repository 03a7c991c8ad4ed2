import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Examples = Array<{ name: string; examples: Array<Record<string, unknown>> }>;
let cache: Examples | undefined;

/** A real webhook payload from @octokit/webhooks-examples (a copy, free to change). */
export function webhookExample(event: string, action?: string): Record<string, unknown> {
  cache ??= JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@octokit/webhooks-examples'), 'utf8')) as Examples;
  const found = cache.find((e) => e.name === event)?.examples.find((p) => action === undefined || p.action === action);
  if (!found) throw new Error(`@octokit/webhooks-examples has no ${event}${action ? `.${action}` : ''} example`);
  return structuredClone(found);
}
