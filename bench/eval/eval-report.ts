/** The tables `npm run eval` prints: one per collection and limit, a row per setup. */
import { type Evaluation, METRIC_LABELS, METRIC_NAMES } from "../../src/cli/replay/metrics.ts";

export type Row = {
  collection: string;
  limit: number;
  setup: string;
  evaluation: Evaluation;
  failed: number;
  shortened: number;
  /** nDCG@10 against the setup's reference, with the paired randomisation test's p. */
  versus?: { reference: string; ratio: number; p_value: number };
};

const pad = (text: string, width: number) => text.padEnd(width);

export function formatTables(rows: readonly Row[]): string {
  const out: string[] = [];
  const keys = [...new Set(rows.map((r) => `${r.collection}\u0000${r.limit}`))];
  for (const key of keys) {
    const [collection, limit] = key.split("\u0000");
    const group = rows.filter((r) => r.collection === collection && String(r.limit) === limit);
    const first = group[0] as Row;
    out.push(
      `${collection}, limit ${limit}: ${first.evaluation.queries} judged queries` +
        (first.shortened > 0 ? ` (${first.shortened} cut to the query limit)` : ""),
    );
    const width = Math.max(14, ...group.map((r) => r.setup.length + 2));
    out.push(
      pad("setup", width) + METRIC_NAMES.map((m) => pad(METRIC_LABELS[m], 11)).join("") +
        "nDCG@10 vs reference",
    );
    for (const row of group) {
      const versus = row.versus
        ? `${row.versus.ratio.toFixed(3)}x ${row.versus.reference} (p ${
          row.versus.p_value.toFixed(3)
        })`
        : "";
      const failed = row.failed > 0 ? ` ${row.failed} searches not ok` : "";
      out.push(
        pad(row.setup, width) +
          METRIC_NAMES.map((m) => pad(row.evaluation.mean[m].toFixed(3), 11)).join("") + versus +
          failed,
      );
    }
    out.push("");
  }
  return out.join("\n");
}
