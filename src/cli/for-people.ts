/**
 * An envelope's messages serve agents too, and some end by pointing at a JSON field
 * ("...; see result", "...; see decision.skipped"). A person at the terminal never sees those
 * fields, so human mode prints what they hold instead of where to look.
 */
import type { Envelope, SearchResult } from "../protocol/envelope-schema.ts";

/** A trailing pointer at a field of the envelope, as the gateway words it. */
const POINTER = /; see ((?:result|decision)(?:\.[a-z_]+)*)$/;

export function forPeople(text: string, envelope: Envelope): string {
  const pointer = POINTER.exec(text);
  if (pointer === null) return text;
  const said = text.slice(0, pointer.index);
  const result = envelope.result;
  const search = result !== undefined && "decision" in result ? result : null;
  const content = search === null
    ? ""
    : pointer[1] === "decision.skipped"
    ? skipped(search).join(", ")
    : [...failed(search), ...skipped(search)].join(", ");
  return content === "" ? said : `${said}: ${content}`;
}

/** Each attempt that did not succeed, with its code (and message when it says more). */
function failed(result: SearchResult): string[] {
  return (result.candidates ?? [])
    .filter((a) => a.outcome !== "success")
    .map((a) => `${a.provider} ${a.code === a.outcome ? a.code : `${a.outcome} (${a.code})`}`);
}

function skipped(result: SearchResult): string[] {
  return result.decision.skipped.map((s) => `${s.provider} skipped (${s.reason})`);
}
