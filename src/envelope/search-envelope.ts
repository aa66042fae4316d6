/**
 * The envelope of a search that ran. The non-streaming answer and the streaming `done` event are
 * both built here, so they describe the same search identically.
 */
import type { View } from "../protocol/search-request.ts";
import type { Envelope, Mining } from "../protocol/envelope-schema.ts";
import type { CompletedSearch } from "../protocol/envelope-schema.ts";
import { buildEnvelope, type EnvelopeExtras, MINING_DISABLED } from "./build-envelope.ts";

export function searchEnvelope(
  search: CompletedSearch,
  requestId: string,
  view: View,
  mining: Mining = MINING_DISABLED,
): Envelope {
  // Every field but the attempts, which the full view puts last; copied by hand, as a rest
  // pattern took V8's slow path on every answer.
  const all = search.result;
  const fields: Record<string, unknown> = {};
  for (const name in all) if (name !== "candidates") fields[name] = all[name as keyof typeof all];
  if (view !== "merged") fields.candidates = all.candidates;
  const result = fields as typeof all;
  const extras: EnvelopeExtras = { result, mining, anyRetryable: search.retryable };
  if (search.retryAfterMs !== undefined) extras.retry_after_ms = search.retryAfterMs;
  if (search.code === "all_providers_failed") {
    extras.error = {
      message: "every selected provider failed or none could be contacted; see result",
    };
  }
  return buildEnvelope("search", search.code, requestId, extras);
}

/** The `done` event's envelope: the same, with the lists that were already streamed left out. */
export function doneEnvelope(
  search: CompletedSearch,
  requestId: string,
  mining: Mining = MINING_DISABLED,
): Envelope {
  const envelope = searchEnvelope(search, requestId, "merged", mining);
  if (envelope.result && "merged" in envelope.result) delete envelope.result.merged;
  return envelope;
}

/** Server-Timing (W3C): one entry per attempt and one for fusion, so devtools show where time went. */
export function serverTiming(search: CompletedSearch): string {
  let out = "";
  for (const r of search.result.candidates ?? []) {
    out += `p_${r.provider};dur=${r.latency_ms};desc="${r.outcome}", `;
  }
  return `${out}fusion;dur=${search.timings.fusion_ms.toFixed(2)}`;
}
