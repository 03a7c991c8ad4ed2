import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

/** GitHub's own cap on webhook payloads (the route reads no more; nothing recorded unpacks larger). */
export const WEBHOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
/** Bodies above this are not recorded as they came: they would not fit in a MongoDB document (16 MiB) beside its fields. */
export const MAX_RECORDED_BODY_BYTES = 15 * 1024 * 1024;

/** Marks a body recorded gzipped (base64): a JSON body never starts with it. */
const GZIPPED = 'gzip-base64:';
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * A webhook body as the delivery store keeps it: as it came, or gzipped when it is too large for a document (GitHub
 * sends up to 25 MiB, and JSON shrinks several times). Null when even that does not fit: it is handled before the
 * answer instead (a payload of incompressible data, not seen from GitHub).
 */
export async function recordedBody(body: string): Promise<string | null> {
  if (Buffer.byteLength(body) <= MAX_RECORDED_BODY_BYTES) return body;
  const packed = GZIPPED + (await gzipAsync(body)).toString('base64');
  return packed.length <= MAX_RECORDED_BODY_BYTES ? packed : null;
}

/** The body GitHub sent, from what the delivery store kept (see recordedBody); unpacked off the event loop. */
export async function bodyOf(recorded: string): Promise<string> {
  if (!recorded.startsWith(GZIPPED)) return recorded;
  const packed = Buffer.from(recorded.slice(GZIPPED.length), 'base64');
  return (await gunzipAsync(packed, { maxOutputLength: WEBHOOK_BODY_LIMIT_BYTES })).toString('utf8');
}
