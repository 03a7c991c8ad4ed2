import { Types } from 'mongoose';

/** Ids from clients are strings; only 24 hex digits name a document. */
export function parseObjectId(id: string): Types.ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new Types.ObjectId(id) : null;
}

/**
 * A new id that sorts after `after`. An ObjectId is its second, then a random part of its process and a counter: two
 * processes' ids of the same second sort either way. The new id keeps its own process part and counter (so it stays
 * unique) and, only when it would sort before `after`, takes the second after `after`'s.
 */
export function idAfter(after: Types.ObjectId | null): Types.ObjectId {
  const id = new Types.ObjectId();
  if (!after || id.toHexString() > after.toHexString()) return id;
  const bytes = Buffer.from(id.id);
  bytes.writeUInt32BE(Math.floor(after.getTimestamp().getTime() / 1000) + 1, 0);
  return new Types.ObjectId(bytes);
}
