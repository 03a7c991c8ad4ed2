/** Plain-text output for people: aligned columns, local times with how far off they are. */

export type Align = 'left' | 'right';

/** Rows under a header, columns two spaces apart; the last column is not padded (no trailing spaces). */
export function formatTable(header: string[], rows: string[][], align: Align[] = []): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => [...(row[column] ?? '')].length)));
  return all.map((row) =>
    row
      .map((cell, column) => {
        if (column === row.length - 1 && align[column] !== 'right') return cell;
        const pad = ' '.repeat((widths[column] ?? 0) - [...cell].length);
        return align[column] === 'right' ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

/** `label:  value` lines with the values aligned. */
export function formatFields(fields: [string, string | undefined][]): string[] {
  const shown = fields.filter((f): f is [string, string] => f[1] !== undefined && f[1] !== '');
  const width = Math.max(0, ...shown.map(([label]) => label.length + 1));
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${value}`);
}

export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** A duration in words: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function duration(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** "in 12 min" or "5 min ago". */
export function relative(iso: string, now = Date.now()): string {
  const delta = Date.parse(iso) - now;
  return delta >= 0 ? `in ${duration(delta)}` : `${duration(delta)} ago`;
}

/** Local "HH:MM" today, "YYYY-MM-DD HH:MM" another day; with seconds when asked. */
export function clock(iso: string, options: { seconds?: boolean; now?: number } = {}): string {
  const at = new Date(iso);
  const now = new Date(options.now ?? Date.now());
  const time = `${pad2(at.getHours())}:${pad2(at.getMinutes())}${options.seconds ? `:${pad2(at.getSeconds())}` : ''}`;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  return sameDay ? time : `${at.getFullYear()}-${pad2(at.getMonth() + 1)}-${pad2(at.getDate())} ${time}`;
}

/** "14:05 (in 12 min)". */
export function when(iso: string, now = Date.now()): string {
  return `${clock(iso, { now })} (${relative(iso, now)})`;
}

/** Enum values for reading: "failed_tests" -> "failed tests". */
export const words = (value: string) => value.replace(/_/g, ' ');
