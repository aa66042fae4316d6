/**
 * A search envelope for people: the merged results as a table (rank, title, found by, locator),
 * one line per provider with its outcome and latency, and the search's warnings.
 */
import type { Envelope, SearchResult } from "../protocol/envelope-schema.ts";
import { TITLE_COLUMN_CHARS } from "../protocol/limits.ts";
import { forPeople } from "./for-people.ts";
import type { Paint } from "./paint.ts";

export function searchResultOf(envelope: Envelope): SearchResult | null {
  const result = envelope.result;
  return result !== undefined && "decision" in result ? result : null;
}

export function renderSearch(envelope: Envelope, paint: Paint): string {
  const result = searchResultOf(envelope);
  if (result === null) return "";
  const lines: string[] = [];
  const merged = result.merged ?? [];
  if (merged.length === 0) {
    lines.push(paint.dim("no results"));
  } else {
    const rows = merged.map((
      m,
    ) => [String(m.rank), cut(m.title || "(untitled)"), m.found_by.join(", "), m.locator]);
    // The locator is last and never cut: a cut locator points at the wrong page.
    lines.push(...table(["#", "title", "found by", "locator"], rows, paint));
  }
  lines.push("", paint.bold("providers"));
  const attempts = result.candidates ?? [];
  const providerRows: string[][] = attempts.map((a) => {
    const outcome = a.outcome === "success"
      ? paint.green("success")
      : paint.red(a.code === a.outcome ? a.outcome : `${a.outcome} (${a.code})`);
    const found = `${a.candidate_count} results`;
    // A cached answer says how old it is: the provider was not asked this time.
    const cached = a.cached ? `, cached ${Math.round((a.age_ms ?? 0) / 1000)} s ago` : "";
    const detail = a.outcome === "success" ? found + cached : a.message;
    return [a.provider, outcome, `${a.latency_ms} ms`, detail];
  });
  if (attempts.length === 0) {
    // `view: merged` leaves the attempts out; the latencies still name who ran.
    for (const [name, ms] of Object.entries(result.latency_ms.providers)) {
      providerRows.push([name, "ran", `${ms} ms`, ""]);
    }
  }
  for (const s of result.decision.skipped) {
    providerRows.push([s.provider, paint.dim(`skipped (${s.reason})`), "", ""]);
  }
  for (const t of result.decision.trimmed) {
    providerRows.push([
      t.provider,
      paint.dim(`trimmed (${t.reason})`),
      "",
      `costs ${t.cost_micros} micros`,
    ]);
  }
  lines.push(...table(null, providerRows, paint));
  const ran = result.decision.providers.length;
  const failed = attempts.filter((a) => a.outcome !== "success").length;
  const summary = `${envelope.code}: ${merged.length} results from ${ran - failed} of ${ran} ` +
    `providers in ${result.latency_ms.total} ms (request ${envelope.request_id})`;
  lines.push("", envelope.ok ? summary : paint.red(summary));
  for (const warning of result.warnings) {
    lines.push(paint.yellow(`warning: ${forPeople(warning, envelope)}`));
  }
  return `${lines.join("\n")}\n`;
}

/** Left-aligned columns, two spaces apart; widths ignore colour codes. */
export function table(header: string[] | null, rows: string[][], paint: Paint): string[] {
  const all = header ? [header, ...rows] : rows;
  const widths: number[] = [];
  for (const row of all) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell));
    });
  }
  const format = (row: string[]) =>
    `  ${row.map((cell, i) => i === row.length - 1 ? cell : pad(cell, widths[i] ?? 0)).join("  ")}`
      .trimEnd();
  return [...(header ? [paint.bold(format(header))] : []), ...rows.map(format)];
}

function cut(text: string): string {
  const points = Array.from(text);
  return points.length <= TITLE_COLUMN_CHARS
    ? text
    : `${points.slice(0, TITLE_COLUMN_CHARS - 1).join("")}…`;
}

function pad(cell: string, width: number): string {
  return cell + " ".repeat(Math.max(0, width - visibleLength(cell)));
}

function visibleLength(text: string): number {
  // deno-lint-ignore no-control-regex
  return Array.from(text.replace(/\u001b\[[0-9;]*m/g, "")).length;
}
