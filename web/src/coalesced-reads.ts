/**
 * Reads a page's views again after changes, at most once per `minIntervalMs`:
 * the changes in between make one trailing read, and none is made while the
 * page is hidden (one when it shows again, if something changed). A home page
 * of many busy queues would otherwise read every queue once per change of each.
 */
export function coalescedReads(read: () => void, minIntervalMs: number, hidden: () => boolean): { changed(): void; shown(): void; stop(): void } {
  let waiting: ReturnType<typeof setTimeout> | null = null;
  let missed = false;
  const readNow = () => {
    if (hidden()) {
      missed = true;
      return;
    }
    missed = false;
    read();
    waiting = setTimeout(() => {
      waiting = null;
      if (missed) readNow();
    }, minIntervalMs);
  };
  return {
    changed() {
      if (waiting) missed = true;
      else readNow();
    },
    shown() {
      if (!hidden() && missed && !waiting) readNow();
    },
    stop() {
      if (waiting) clearTimeout(waiting);
      waiting = null;
    },
  };
}
