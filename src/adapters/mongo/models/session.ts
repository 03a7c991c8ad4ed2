import { Schema, type Connection } from 'mongoose';

/**
 * Dashboard sign-in sessions. `_id` is the SHA-256 hex of the cookie's random
 * id, never the id itself; sessions are read by `_id` only.
 */
const sessionSchema = new Schema(
  {
    _id: { type: String, required: true },
    kind: { type: String, enum: ['api_token'], required: true },
    subject: { type: String, required: true },
    tokenHash: { type: String, required: true },
    host: { type: String, required: true },
    owner: { type: String, required: true },
    csrfToken: { type: String, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { collection: 'ui_sessions', versionKey: false },
);
// The TTL index on expiresAt is created apart (ensureSessionExpiryIndex): the local
// FerretDB refuses the option ("expireAfterSeconds is not implemented"). Reads
// refuse an expired session and delete it; sign-out deletes it.

export function sessionModel(connection: Connection) {
  return connection.model('UiSession', sessionSchema);
}
