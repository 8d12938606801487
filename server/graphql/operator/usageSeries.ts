// Usage over time: browser minutes of a project per hour or day (UTC), read from the Usage table
// (which outlives session records). Each session's [startedAt, endedAt or now) is split over the
// buckets it overlaps.
import type { Db } from '../../db/client.ts';
import { Invalid } from '../../errors.ts';

export interface UsagePoint {
  at: string;
  browserMinutes: number;
}

export type Granularity = 'HOUR' | 'DAY';
export const MAX_BUCKETS = 400;

export async function usageSeries(db: Db, projectId: string, granularity: Granularity, buckets: number, now: number): Promise<UsagePoint[]> {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS) throw new Invalid(`buckets must be 1..${MAX_BUCKETS}`);
  const unit = granularity === 'DAY' ? 'day' : 'hour';
  const step = granularity === 'DAY' ? '1 day' : '1 hour';
  // Usage timestamps are stored as UTC without a zone, like projectUsage reads them.
  const at = new Date(now).toISOString().replace('Z', '');
  const rows = await db.$queryRaw<{ epoch: number; minutes: number }[]>`
    WITH b AS (
      SELECT generate_series(
        date_trunc(${unit}, ${at}::timestamp) - (${buckets - 1} * ${step}::interval),
        date_trunc(${unit}, ${at}::timestamp),
        ${step}::interval) AS start
    )
    SELECT EXTRACT(EPOCH FROM b.start)::float8 AS epoch,
           -- A bucket without usage joins one all-NULL row: it adds nothing.
           COALESCE(SUM(CASE WHEN u."sessionId" IS NULL THEN 0 ELSE EXTRACT(EPOCH FROM (
             LEAST(COALESCE(u."endedAt", ${at}::timestamp), b.start + ${step}::interval) - GREATEST(u."startedAt", b.start)
           )) END), 0)::float8 / 60 AS minutes
    FROM b
    LEFT JOIN "Usage" u
      ON u."projectId" = ${projectId}
     AND u."startedAt" < b.start + ${step}::interval
     AND COALESCE(u."endedAt", ${at}::timestamp) > b.start
    GROUP BY b.start
    ORDER BY b.start`;
  return rows.map((r) => ({ at: new Date(r.epoch * 1000).toISOString(), browserMinutes: Math.round(Math.max(0, r.minutes) * 1000) / 1000 }));
}
