/** Webhook deliveries already applied: GitHub redelivers with the same id. */
export interface DeliveryStore {
  /** True when this delivery id is new (atomic: an insert under a unique key). */
  claim(deliveryId: string, at: Date): Promise<boolean>;
  /** Forgets a claim whose handling failed, so a redelivery is applied. */
  release(deliveryId: string): Promise<void>;
  /** Drops claims older than `before` (no TTL indexes on FerretDB). */
  prune(before: Date): Promise<void>;
}
