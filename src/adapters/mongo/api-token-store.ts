import type { Connection, Types } from 'mongoose';
import { orgKey } from '../../domain/repo.js';
import type { ApiTokenRecord } from '../../domain/records.js';
import type { ApiTokenStore } from '../../ports/stores.js';
import { SharedReads } from '../../concurrency/shared-reads.js';
import { apiTokenModel } from './models/api-token.js';
import { parseObjectId } from './object-id.js';

type Doc = { _id: Types.ObjectId; host: string; owner: string; name: string; prefix: string; createdAt: Date; revokedAt?: Date | null };

function toRecord(doc: Doc): ApiTokenRecord {
  return {
    id: doc._id.toHexString(),
    host: doc.host,
    owner: doc.owner,
    name: doc.name,
    prefix: doc.prefix,
    createdAt: doc.createdAt,
    revokedAt: doc.revokedAt ?? null,
  };
}

export function mongoApiTokenStore(connection: Connection): ApiTokenStore {
  const Tokens = apiTokenModel(connection);
  // Every request looks its token up: concurrent requests with the same token share the lookup under way
  // (a revocation in this process unshares it; elsewhere, a request waits for at most one lookup begun before it).
  const lookups = new SharedReads<string, ApiTokenRecord | null>();
  return {
    async insert(token) {
      const doc = await Tokens.create({ ...token, orgKey: orgKey(token.host, token.owner), revokedAt: null });
      return toRecord(doc);
    },
    findActiveByHash(tokenHash) {
      const hash = String(tokenHash);
      return lookups.read(hash, async () => {
        const doc = await Tokens.findOne({ tokenHash: hash, revokedAt: null }).lean<Doc>();
        return doc ? toRecord(doc) : null;
      });
    },
    async list() {
      const docs = await Tokens.find({}).sort({ createdAt: 1 }).lean<Doc[]>();
      return docs.map(toRecord);
    },
    async revoke(id, at) {
      const _id = parseObjectId(id);
      if (!_id) return false;
      const doc = await Tokens.findById(_id).lean<Doc>();
      if (!doc) return false;
      if (!doc.revokedAt) await Tokens.updateOne({ _id: doc._id }, { $set: { revokedAt: at } });
      lookups.forget();
      return true;
    },
  };
}
