/** The tables `npm run eval` prints: one per collection and limit, a row per setup. */
import { type Evaluation, METRIC_LABELS, METRIC_NAMES } from "../../src/cli/replay/metrics.ts";

export type Row = {
  collection: string;
  limit: number;
  setup: string;
  evaluation: Evaluation;
  failed: number;
  shortened: number;
  /** nDCG@10 (and MRR) against the setup's reference, with the paired randomisation test's p. */
  versus?: { reference: string; ratio: number; mrr_ratio: number; p_value: number };
  /** A score group's member searches that carried the group's statistics, of all of them. */
  sums?: { sent: number; searches: number };
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
        }), MRR ${row.versus.mrr_ratio.toFixed(3)}x`
        : "";
      const failed = row.failed > 0 ? ` ${row.failed} searches not ok` : "";
      const sums = row.sums && row.sums.sent < row.sums.searches
        ? ` sums in ${row.sums.sent} of ${row.sums.searches} member searches`
        : "";
      out.push(
        pad(row.setup, width) +
          METRIC_NAMES.map((m) => pad(row.evaluation.mean[m].toFixed(3), 11)).join("") + versus +
          failed + sums,
      );
    }
    out.push("");
  }
  return out.join("\n");
}
