// Browser minutes over time as an inline SVG bar chart (no chart library): one bar per hour or
// day, a light grid, labels at the ends, and a tooltip per bar.
import type { UsagePoint } from '../api/queries.ts';

export function UsageChart({ points, granularity, label }: { points: UsagePoint[]; granularity: 'HOUR' | 'DAY'; label: string }) {
  const width = 600;
  const height = 140;
  const pad = { top: 10, right: 8, bottom: 22, left: 36 };
  const max = Math.max(1, ...points.map((p) => p.browserMinutes));
  const top = niceCeil(max);
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const bw = points.length ? innerW / points.length : innerW;
  const fmt = (iso: string) => {
    const d = new Date(iso);
    return granularity === 'HOUR' ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  };
  const total = points.reduce((a, p) => a + p.browserMinutes, 0);
  return (
    <figure className="chart" aria-label={label}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" preserveAspectRatio="none">
        <title>{`${label}: ${total.toFixed(1)} browser minutes`}</title>
        {[0, 0.5, 1].map((f) => {
          const y = pad.top + innerH * (1 - f);
          return (
            <g key={f}>
              <line x1={pad.left} x2={width - pad.right} y1={y} y2={y} className="grid" />
              <text x={pad.left - 6} y={y + 4} textAnchor="end" className="axis">{axisLabel(top * f)}</text>
            </g>
          );
        })}
        {points.map((p, i) => {
          const h = (p.browserMinutes / top) * innerH;
          return (
            <rect key={p.at} x={pad.left + i * bw + bw * 0.15} width={Math.max(1, bw * 0.7)} y={pad.top + innerH - h} height={Math.max(p.browserMinutes > 0 ? 1.5 : 0, h)} rx={1.5} className="bar">
              <title>{`${fmt(p.at)}: ${p.browserMinutes.toFixed(1)} min`}</title>
            </rect>
          );
        })}
        {total === 0 && (
          <text x={pad.left + innerW / 2} y={pad.top + innerH / 2} textAnchor="middle" className="axis empty-note">No browser time in this period</text>
        )}
        {points.length > 0 && (
          <>
            <text x={pad.left} y={height - 6} className="axis">{fmt(points[0]!.at)}</text>
            <text x={width - pad.right} y={height - 6} textAnchor="end" className="axis">{fmt(points[points.length - 1]!.at)}</text>
          </>
        )}
      </svg>
      <figcaption className="muted">Browser minutes per {granularity === 'HOUR' ? 'hour' : 'day'}</figcaption>
    </figure>
  );
}

const axisLabel = (v: number): string => (v >= 10 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}
