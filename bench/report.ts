/** The results table: one row per measurement, the naive baseline and a reference beside the gateway. */

export type Verdict = "PASS" | "MISS" | "";

export type Row = {
  measurement: string;
  gateway: string;
  naive: string;
  reference: string;
  target: string;
  result: Verdict;
};

type Cells = Record<keyof Row, string>;

export const verdict = (ok: boolean): Verdict => (ok ? "PASS" : "MISS");

const HEADER: Cells = {
  measurement: "measurement",
  gateway: "gateway",
  naive: "naive baseline",
  reference: "reference",
  target: "target",
  result: "result",
};

const COLUMNS = ["measurement", "gateway", "naive", "reference", "target", "result"] as const;

export function table(rows: readonly Row[]): string {
  const all = [HEADER, ...rows];
  const width = Object.fromEntries(
    COLUMNS.map((c) => [c, Math.max(...all.map((r) => r[c].length))]),
  ) as Record<(typeof COLUMNS)[number], number>;
  const line = (r: Cells) => COLUMNS.map((c) => r[c].padEnd(width[c])).join(" | ").trimEnd();
  const rule = COLUMNS.map((c) => "-".repeat(width[c])).join("-|-");
  return [line(HEADER), rule, ...rows.map(line)].join("\n");
}

export function notes(lines: readonly string[]): string {
  return lines.map((l, i) => `[${i + 1}] ${l}`).join("\n");
}
