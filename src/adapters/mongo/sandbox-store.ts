import { Schema, type Connection } from 'mongoose';
import type { SandboxStore } from '../../ports/sandbox-store.js';

const sandboxRepositorySchema = new Schema(
  { _id: { type: String, required: true }, json: { type: String, required: true }, updatedAt: { type: Date, required: true } },
  { collection: 'sandbox_repositories', versionKey: false },
);

export function mongoSandboxStore(connection: Connection): SandboxStore {
  const Repositories = connection.model('SandboxRepository', sandboxRepositorySchema);
  return {
    async load(repoKey) {
      const doc = await Repositories.findById(String(repoKey)).lean<{ json: string }>();
      return doc?.json ?? null;
    },
    async save(repoKey, json) {
      await Repositories.updateOne({ _id: String(repoKey) }, { $set: { json, updatedAt: new Date() } }, { upsert: true });
    },
  };
}
