import { Schema, type Connection, type InferSchemaType } from 'mongoose';

/** Organization API tokens: the SHA-256 of the secret, never the secret. */
const apiTokenSchema = new Schema(
  {
    tokenHash: { type: String, required: true },
    prefix: { type: String, required: true },
    host: { type: String, required: true },
    owner: { type: String, required: true },
    orgKey: { type: String, required: true },
    name: { type: String, required: true },
    createdAt: { type: Date, required: true },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'api_tokens', versionKey: false },
);
apiTokenSchema.index({ tokenHash: 1 }, { unique: true });
apiTokenSchema.index({ orgKey: 1, createdAt: 1 });

export type ApiTokenDoc = InferSchemaType<typeof apiTokenSchema>;

export function apiTokenModel(connection: Connection) {
  return connection.model('ApiToken', apiTokenSchema);
}
