import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLOURS = ['#0969da', '#bf3989', '#1a7f37', '#9a6700', '#cf222e', '#8250df'];

/**
 * A time series chart (uPlot: canvas, ~50 KB, fast with thousands of points and
 * no dependencies). The same numbers are in a table for screen readers.
 */
export function Chart({ title, x, series, bars = false }: { title: string; x: number[]; series: Array<{ label: string; values: Array<number | null> }>; bars?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || series.length === 0) return;
    const width = Math.max(280, Math.min(el.clientWidth || 720, 960));
    const plot = new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            fill: bars ? `${COLOURS[i % COLOURS.length]}55` : undefined,
            width: 2,
            ...(bars ? { paths: uPlot.paths.bars?.({ size: [0.6, 40] }) } : {}),
            spanGaps: false,
          })),
        ],
        axes: [{}, { size: 50 }],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [x, series, bars]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="plot" role="img" aria-label={title} />
      <table class="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">time</th>
            {series.map((s) => (
              <th scope="col" key={s.label}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {x.map((t, i) => (
            <tr key={t}>
              <th scope="row">{new Date(t * 1000).toISOString()}</th>
              {series.map((s) => (
                <td key={s.label}>{s.values[i] ?? ''}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
