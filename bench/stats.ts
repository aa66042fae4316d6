/** Percentiles and byte/ms formatting for the report. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export const p50 = (values: readonly number[]) => percentile(values, 50);
export const p99 = (values: readonly number[]) => percentile(values, 99);

export const MiB = 1024 * 1024;

export function ms(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)} ms` : "n/a";
}

export function mib(bytes: number): string {
  return Number.isFinite(bytes) ? `${(bytes / MiB).toFixed(1)} MiB` : "n/a";
}

export function count(bytes: number): string {
  return Number.isFinite(bytes) ? Math.round(bytes).toLocaleString("en-US") : "n/a";
}
