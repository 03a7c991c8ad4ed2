import type { Connection } from 'mongoose';
import type { SessionRecord, SessionStore } from '../../ports/stores.js';
import { sessionModel } from './models/session.js';

type Doc = Omit<SessionRecord, 'id'> & { _id: string };

const SESSION_ID_HASH = /^[0-9a-f]{64}$/;

function toRecord(doc: Doc): SessionRecord {
  return {
    id: doc._id,
    kind: doc.kind,
    subject: doc.subject,
    tokenHash: doc.tokenHash,
    host: doc.host,
    owner: doc.owner,
    csrfToken: doc.csrfToken,
    createdAt: doc.createdAt,
    expiresAt: doc.expiresAt,
  };
}

/**
 * Lets MongoDB delete expired sessions by itself (a TTL index). The local
 * FerretDB answers "not implemented" for TTL options: there expired sessions are
 * only refused and deleted when read, which is what counts.
 */
export async function ensureSessionExpiryIndex(connection: Connection): Promise<void> {
  try {
    await sessionModel(connection).collection.createIndex({ expiresAt: 1 }, { name: 'expiresAt_ttl', expireAfterSeconds: 0 });
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (code === 238 || (typeof message === 'string' && /not implemented/i.test(message))) return;
    throw error;
  }
}

/** Sessions by `_id` only (the one filter the local FerretDB answers from an index). */
export function mongoSessionStore(connection: Connection): SessionStore {
  const Sessions = sessionModel(connection);
  return {
    async insert(session) {
      const { id, ...rest } = session;
      await Sessions.create({ ...rest, _id: String(id) });
    },
    async find(id, now) {
      if (typeof id !== 'string' || !SESSION_ID_HASH.test(id)) return null;
      const doc = await Sessions.findById(id).lean<Doc>();
      if (!doc) return null;
      if (doc.expiresAt.getTime() <= now.getTime()) {
        await Sessions.deleteOne({ _id: id });
        return null;
      }
      return toRecord(doc);
    },
    async delete(id) {
      if (typeof id !== 'string' || !SESSION_ID_HASH.test(id)) return;
      await Sessions.deleteOne({ _id: id });
    },
  };
}
