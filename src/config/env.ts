import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { decodeWebhookSecretKey } from '../webhooks/secret-key.js';

/**
 * The service's configuration, read once from the environment. This module is
 * the only reader of process.env (besides the CLI's flags), so every setting is
 * validated and documented in one place.
 */
const optionalString = z
  .string()
  .transform((s) => s.trim())
  .pipe(z.string())
  .optional()
  .transform((s) => (s === undefined || s === '' ? undefined : s));

export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  MONGODB_URI: optionalString.pipe(
    z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
      .optional(),
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one object a line) or `pretty` (coloured lines for people). Unset: pretty when stdout is a terminal, else JSON. */
  LOG_FORMAT: optionalString.pipe(z.enum(['json', 'pretty']).optional()),
  /** Where the local FerretDB keeps its data when MONGODB_URI is unset. */
  MQ_DATA_DIR: optionalString,
  /** Loopback port of the local FerretDB shared by the service and the `mq` CLI. */
  MQ_LOCAL_DB_PORT: z.coerce.number().int().min(1).max(65535).default(27217),
  /** The simulated host for repositories on host "sandbox" (demos, trials, tests). */
  MQ_SANDBOX: z
    .enum(['true', 'false', '1', '0', 'on', 'off'])
    .default('true')
    .transform((v) => v === 'true' || v === '1' || v === 'on'),
  /** Serves GET /metrics (the service's own metrics) on the main port, behind `Authorization: Bearer <token>`. */
  MQ_OPERATOR_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** Serves GET /metrics without a token on this separate port (keep it inside the deployment). */
  MQ_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Outgoing webhooks may go to http:// and to private, loopback and link-local addresses (local runs, tests). */
  MQ_WEBHOOK_ALLOW_PRIVATE: z
    .enum(['true', 'false', '1', '0', 'on', 'off'])
    .default('false')
    .transform((v) => v === 'true' || v === '1' || v === 'on'),
  /** Encrypts webhook signing secrets at rest (AES-256-GCM): 32 bytes in base64. Unset: a key file under .data/ (local runs). */
  MQ_WEBHOOK_SECRET_KEY: optionalString.pipe(
    z
      .string()
      .refine((v) => decodeWebhookSecretKey(v) !== null, 'must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)')
      .optional(),
  ),
  /**
   * Behind a TLS-terminating proxy: how many proxy hops to trust for X-Forwarded-Proto/-For
   * (a number), so the session cookie gets Secure and logs show the client. Unset: none.
   */
  MQ_TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).optional(),
  /** How long a replica's hold on a queue lasts unless renewed: a replica that dies hands its queues over after this. */
  MQ_QUEUE_LEASE_MS: z.coerce.number().int().min(3_000).max(600_000).default(30_000),
  /** Timeout of each outgoing webhook call. */
  MQ_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** How often the delivery worker looks for due webhook deliveries when idle. */
  MQ_WEBHOOK_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  // The GitHub App. Optional until the GitHub host is configured.
  APP_ID: optionalString.pipe(z.string().regex(/^\d+$/, 'must be a numeric GitHub App id').optional()),
  PRIVATE_KEY: optionalString,
  /** The GitHub App's .pem file (Probot's convention); PRIVATE_KEY wins when both are set, as in Probot. */
  PRIVATE_KEY_PATH: optionalString,
  WEBHOOK_SECRET: optionalString,
  GHE_HOST: optionalString,
  /** The GitHub REST API's address when it is not the host's default (a GHE.com data-residency host, a test double). */
  GITHUB_API_URL: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
});

export type Config = z.infer<typeof envSchema>;

const GITHUB_APP_VARIABLES = ['APP_ID', 'PRIVATE_KEY', 'WEBHOOK_SECRET'] as const;

/** The GitHub App is configured by all three variables or none: half a configuration is a mistake. */
function missingGitHubAppVariables(config: Config): string[] {
  const present = GITHUB_APP_VARIABLES.filter((v) => config[v] !== undefined);
  return present.length === 0 ? [] : GITHUB_APP_VARIABLES.filter((v) => config[v] === undefined);
}

/** A PEM private key as GitHub hands it out (PKCS#1) or converted (PKCS#8). */
const PEM_PRIVATE_KEY = /-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----/;

/**
 * PRIVATE_KEY_PATH, read into PRIVATE_KEY (relative paths from the working
 * directory). The file's content is never part of a message.
 */
function readPrivateKeyFile(path: string): { ok: true; key: string } | { ok: false; message: string } {
  const shown = `Invalid configuration: PRIVATE_KEY_PATH=${JSON.stringify(path)}`;
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory, not a file' : code === 'EACCES' ? 'the file is not readable' : `the file cannot be read (${code ?? String(error)})`;
    return { ok: false, message: `${shown}: ${why}; it must name the GitHub App's private key (.pem) file.` };
  }
  if (!PEM_PRIVATE_KEY.test(text)) {
    return { ok: false, message: `${shown}: the file is not a PEM private key (expected -----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----, the .pem file GitHub generates for the App).` };
  }
  return { ok: true, key: text };
}

export type ConfigResult = { ok: true; config: Config; warnings?: string[] } | { ok: false; message: string };

/**
 * Variables whose values a configuration error may print: none can hold a
 * secret. The others (tokens, keys, secrets, and URLs, which may carry
 * credentials) are named but shown as "(hidden)", since start-up errors go to
 * logs.
 */
const SHOWN_IN_ERRORS = new Set([
  'PORT',
  'HOST',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'MQ_DATA_DIR',
  'MQ_LOCAL_DB_PORT',
  'MQ_SANDBOX',
  'MQ_METRICS_PORT',
  'MQ_WEBHOOK_ALLOW_PRIVATE',
  'MQ_TRUST_PROXY_HOPS',
  'MQ_QUEUE_LEASE_MS',
  'MQ_WEBHOOK_TIMEOUT_MS',
  'MQ_WEBHOOK_POLL_MS',
  'APP_ID',
  'PRIVATE_KEY_PATH',
  'GHE_HOST',
]);

/**
 * Parses the environment; a bad value comes back as a message naming the variable.
 * PRIVATE_KEY_PATH's file is read here and becomes PRIVATE_KEY for the rest of the
 * service; settings that are valid but worth a word come back as warnings.
 */
export function loadConfig(env: Record<string, string | undefined>): ConfigResult {
  const parsed = envSchema.safeParse(env);
  if (parsed.success) {
    const config = parsed.data;
    const warnings: string[] = [];
    if (config.PRIVATE_KEY_PATH !== undefined) {
      if (config.PRIVATE_KEY !== undefined) {
        // Probot's rule: the key in the environment wins, the file is not read.
        warnings.push('PRIVATE_KEY and PRIVATE_KEY_PATH are both set: PRIVATE_KEY is used, PRIVATE_KEY_PATH is ignored.');
      } else {
        const file = readPrivateKeyFile(config.PRIVATE_KEY_PATH);
        if (!file.ok) return { ok: false, message: file.message };
        config.PRIVATE_KEY = file.key;
      }
    }
    const missing = missingGitHubAppVariables(config);
    if (missing.length > 0) {
      return {
        ok: false,
        message: `Invalid configuration: ${missing.join(', ')} must be set too: the GitHub App needs APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH) and WEBHOOK_SECRET together.`,
      };
    }
    return warnings.length > 0 ? { ok: true, config, warnings } : { ok: true, config };
  }
  const lines = parsed.error.issues.map((issue) => {
    const variable = String(issue.path[0] ?? 'environment');
    const value = env[variable];
    const shown = SHOWN_IN_ERRORS.has(variable) ? JSON.stringify(value) : '(hidden)';
    return `Invalid configuration: ${variable}=${shown}: ${issue.message}`;
  });
  return { ok: false, message: lines.join('\n') };
}
