/**
 * Reads under way, shared by concurrent callers that ask for the same key: one
 * query answers all of them (64 concurrent requests with one API token look it
 * up once, not 64 times). Nothing is kept once a read ends, so a caller that
 * comes later reads again and sees any change; `forget` makes reads begun
 * before it unshared from then on (a revoked token is looked up afresh).
 */
export class SharedReads<K, V> {
  private readonly underWay = new Map<K, Promise<V>>();

  read(key: K, load: () => Promise<V>): Promise<V> {
    const shared = this.underWay.get(key);
    if (shared) return shared;
    const read = load();
    this.underWay.set(key, read);
    const done = () => {
      if (this.underWay.get(key) === read) this.underWay.delete(key);
    };
    read.then(done, done);
    return read;
  }

  /** Reads under way are no longer shared: the next caller starts its own. */
  forget(): void {
    this.underWay.clear();
  }
}
