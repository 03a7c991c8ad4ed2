/** Times and durations as the pages write them. */

/** A time as people read it, in their own zone. */
export function when(iso: string | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "in 12 min" / "3 h 5 min ago". */
export function relative(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const minutes = Math.round((new Date(iso).getTime() - now) / 60_000);
  if (minutes === 0) return 'now';
  return minutes > 0 ? `in ${duration(minutes)}` : `${duration(-minutes)} ago`;
}

/** Minutes as people read them: "12 min", "3 h 5 min", "1.6 d". */
export function duration(minutes: number): string {
  const whole = Math.round(minutes);
  if (whole < 60) return `${whole} min`;
  if (whole < 48 * 60) return whole % 60 === 0 ? `${whole / 60} h` : `${Math.floor(whole / 60)} h ${whole % 60} min`;
  return `${(whole / 1440).toFixed(1)} d`;
}

