import { promisify } from 'node:util';
import { gunzipSync, gzip } from 'node:zlib';

/** Bodies above this are not recorded as they came: they would not fit in a MongoDB document (16 MiB) beside its fields. */
export const MAX_RECORDED_BODY_BYTES = 15 * 1024 * 1024;

/** Marks a body recorded gzipped (base64): a JSON body never starts with it. */
const GZIPPED = 'gzip-base64:';
const gzipAsync = promisify(gzip);

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

/** The body GitHub sent, from what the delivery store kept (see recordedBody). */
export function bodyOf(recorded: string): string {
  return recorded.startsWith(GZIPPED) ? gunzipSync(Buffer.from(recorded.slice(GZIPPED.length), 'base64')).toString('utf8') : recorded;
}
