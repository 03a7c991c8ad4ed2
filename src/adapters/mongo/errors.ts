/** MongoDB's duplicate-key error: the unique index said "already there". */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}

/** An insert whose document may be there already (a mark, a copy): "already there" is done. */
export async function ignoringDuplicateKey(insert: Promise<unknown>): Promise<void> {
  await insert.catch((error: unknown) => {
    if (!isDuplicateKeyError(error)) throw error;
  });
}

/** An upsert by _id: of two first upserts at once one inserts, the other fails on the duplicate key and is asked again (an update then). */
export async function upsertRetryingDuplicate(upsert: () => Promise<unknown>): Promise<void> {
  await upsert().catch((error: unknown) => {
    if (!isDuplicateKeyError(error)) throw error;
    return upsert();
  });
}

/**
 * The server answered, with an error (a write concern not met, a step-down, a validation): whatever it applied
 * is not known to be durable. Its errors carry a numeric code or a writeConcernError; a lost connection or a
 * time-out carries neither.
 */
export function isServerAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, writeConcernError, errorResponse } = error as { code?: unknown; writeConcernError?: unknown; errorResponse?: unknown };
  return typeof code === 'number' || writeConcernError !== undefined || errorResponse !== undefined;
}
