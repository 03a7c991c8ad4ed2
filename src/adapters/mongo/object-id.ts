import { Types } from 'mongoose';

/** Ids from clients are strings; only 24 hex digits name a document. */
export function parseObjectId(id: string): Types.ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new Types.ObjectId(id) : null;
}
