// Progress lines on stderr ("[bench] ..."), so stdout carries only the result table.

const started = performance.now();

export function progress(message: string): void {
  const s = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench] ${s}s ${message}\n`);
}

/** Milliseconds since `t0` (a performance.now() value). */
export const since = (t0: number): number => performance.now() - t0;
