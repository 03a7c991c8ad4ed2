/** A timed event; ties are broken by insertion order so runs are reproducible. */
interface Scheduled<T> {
  at: number;
  seq: number;
  event: T;
}

/** A binary min-heap of events on the virtual clock. */
export class EventQueue<T> {
  private readonly heap: Array<Scheduled<T>> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, event: T): void {
    this.heap.push({ at, seq: this.seq++, event });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): { at: number; event: T } | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.heap.length && this.less(l, m)) m = l;
        if (r < this.heap.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return { at: top.at, event: top.event };
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a] as Scheduled<T>;
    const y = this.heap[b] as Scheduled<T>;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a] as Scheduled<T>;
    this.heap[a] = this.heap[b] as Scheduled<T>;
    this.heap[b] = x;
  }
}
