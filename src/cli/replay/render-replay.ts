/** `tracefetch replay` for people: the overall figures, what changed most, the judged metrics. */
import type { Envelope } from "../../protocol/envelope-schema.ts";
import type { ReplayResult } from "../../protocol/replay-result-schema.ts";
import { REPLAY_LISTED_QUERIES, REPLAY_REGRESSION_THRESHOLD } from "../../protocol/trace-limits.ts";
import type { Paint } from "../paint.ts";
import { METRIC_LABELS, METRIC_NAMES, type Metrics } from "./metrics.ts";

const figure = (value: number | null) => value === null ? "-" : value.toFixed(4);

export function renderReplay(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("replayed" in result)) return "";
  const r = result as ReplayResult;
  const lines = [
    `replayed ${r.replayed} of ${r.read} traces against ${r.manifest}: ` +
    `overlap@10 ${figure(r.overall.overlap_at_10)}, RBO ${figure(r.overall.rbo)}`,
  ];
  if (r.skipped.query_hashed > 0) {
    lines.push(
      paint.yellow(
        `${r.skipped.query_hashed} skipped: their query was kept only as its HMAC ` +
          "(TRACEFETCH_TRACE_RAW_QUERIES=1 records the text replay needs)",
      ),
    );
  }
  if (r.skipped.unreadable > 0) {
    lines.push(paint.yellow(`${r.skipped.unreadable} lines are not traces and were skipped`));
  }
  if (r.overall.providers_now_failing.length > 0) {
    lines.push(
      `providers that now fail: ${
        r.overall.providers_now_failing.map((p) => `${paint.red(p.provider)} (${p.searches})`)
          .join(", ")
      }`,
    );
  }
  const changed = r.queries
    .filter((q) => q.rbo < 1 || q.overlap_at_10 < 1 || q.now_failing.length > 0)
    .sort((a, b) => a.rbo - b.rbo);
  if (changed.length > 0) {
    lines.push(`changed (${changed.length}), most first: overlap@10  RBO  query`);
    for (const q of changed.slice(0, REPLAY_LISTED_QUERIES)) {
      const failing = q.now_failing.map((f) => `${f.provider} ${f.code}`).join(", ");
      lines.push(
        `  ${figure(q.overlap_at_10)}  ${figure(q.rbo)}  ${JSON.stringify(q.query)}` +
          paint.dim(` (${q.request_id}${failing ? `; now failing: ${failing}` : ""})`),
      );
    }
    if (changed.length > REPLAY_LISTED_QUERIES) {
      lines.push(
        paint.dim(`  and ${changed.length - REPLAY_LISTED_QUERIES} more (--json lists all)`),
      );
    }
  }
  if (r.metrics) lines.push(...metricLines(r.metrics));
  if (r.baseline) {
    const { drops, file } = r.baseline;
    lines.push(
      drops.length === 0
        ? paint.green(`no figure fell by more than ${REPLAY_REGRESSION_THRESHOLD} since ${file}`)
        : paint.red(
          `${drops.length} ${drops.length === 1 ? "figure" : "figures"} fell by more than ` +
            `${REPLAY_REGRESSION_THRESHOLD} since ${file}:`,
        ),
    );
    for (const d of drops) {
      lines.push(
        `  ${d.figure}: ${figure(d.baseline)} -> ${figure(d.replayed)} (-${figure(d.drop)})`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function metricLines(metrics: NonNullable<ReplayResult["metrics"]>): string[] {
  if (metrics.queries === 0) {
    return ["no replayed search has judgments (--qrels matches request ids)"];
  }
  const row = (m: Metrics | null, name: keyof Metrics) => figure(m === null ? null : m[name]);
  return [
    `judged searches: ${metrics.queries}      recorded  replayed`,
    ...METRIC_NAMES.map((name) =>
      `  ${METRIC_LABELS[name].padEnd(20)}  ${row(metrics.recorded, name)}    ${
        row(metrics.replayed, name)
      }`
    ),
  ];
}
