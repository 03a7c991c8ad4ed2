import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest. Signing is an HMAC, which needs the raw
 * secret on every delivery, so secrets cannot be hashed like API tokens: they
 * are encrypted with AES-256-GCM under the operator's key instead. The
 * subscription id is bound in as associated data, so a sealed secret copied
 * onto another subscription does not open.
 */
export class SecretBox {
  static readonly KEY_BYTES = 32;
  private static readonly VERSION = 'v1';

  constructor(private readonly key: Buffer) {
    if (key.length !== SecretBox.KEY_BYTES) throw new Error(`a webhook secret key must be ${SecretBox.KEY_BYTES} bytes`);
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [SecretBox.VERSION, iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** null when it was sealed under another key or context, or is damaged. */
  open(sealed: string, context: string): string | null {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== SecretBox.VERSION || iv === undefined || tag === undefined || ciphertext === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
