/**
 * Bounds every field of a provider's answer (design 3.3) before anything else reads it.
 */
import type { Candidate } from "../protocol/envelope-schema.ts";
import {
  MAX_LOCATOR_CHARS,
  MAX_METADATA_ARRAY_ITEMS,
  MAX_METADATA_DEPTH,
  MAX_METADATA_KEY_CHARS,
  MAX_METADATA_KEYS,
  MAX_METADATA_STRING_CHARS,
  MAX_PUBLISHED_AT_CHARS,
  MAX_SNIPPET_CHARS,
  MAX_TITLE_CHARS,
  MAX_WARNING_CHARS,
  MAX_WARNINGS,
  TRUNCATION_MARKER,
} from "../protocol/limits.ts";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import { redact, redactSecrets } from "../transport/redact.ts";

/** Whitespace other than single inner spaces: a tab, a newline, a run, or space at either end. */
const NEEDS_COLLAPSING = /[^\S ]| {2}|^ | $/;

/** Keys that name secrets, removed at every depth. */
export const SECRET_KEY =
  /authorization|cookie|credential|passw(or)?d|secret|token|api[_-]?key|session|private[_-]?key/i;
/** Keys that would reach an object's prototype in a careless consumer. */
export const POISON_KEYS = new Set(["__proto__", "constructor", "prototype"]);

export type Sanitised = { candidates: Candidate[]; warnings: string[] };

export function sanitiseAnswer(
  wire: readonly WireCandidate[],
  providerWarnings: readonly string[],
  limit: number,
): Sanitised {
  const warnings: string[] = [];
  const candidates: Candidate[] = [];
  let dropped = 0;
  for (const c of wire) {
    if (candidates.length === limit) break;
    // UTF-16 length bounds the code point count from above, so only long locators are counted.
    if (c.locator.length > MAX_LOCATOR_CHARS && Array.from(c.locator).length > MAX_LOCATOR_CHARS) {
      dropped++;
      continue;
    }
    candidates.push(sanitiseCandidate(c));
  }
  if (dropped > 0) {
    warnings.push(
      `dropped ${dropped} candidate(s) whose locator exceeded ${MAX_LOCATOR_CHARS} characters`,
    );
  }
  const kept = candidates.length + dropped;
  if (wire.length > kept) {
    warnings.push(`clipped ${wire.length - kept} candidate(s) beyond the limit of ${limit}`);
  }
  // The gateway's own warnings always survive the cap; the provider's fill the rest in order.
  const theirs = providerWarnings
    .slice(0, MAX_WARNINGS - warnings.length)
    .map((w) => redact(w, MAX_WARNING_CHARS));
  return { candidates, warnings: [...theirs, ...warnings] };
}

function sanitiseCandidate(c: WireCandidate): Candidate {
  const truncated: Candidate["truncated"] = [];
  const field = (value: string, max: number, name: Candidate["truncated"][number]) => {
    const { text, cut } = bound(value, max);
    if (cut) truncated.push(name);
    return text;
  };
  const title = field(c.title, MAX_TITLE_CHARS, "title");
  const snippet = field(c.snippet ?? "", MAX_SNIPPET_CHARS, "snippet");
  const published_at = c.published_at == null
    ? null
    : field(c.published_at, MAX_PUBLISHED_AT_CHARS, "published_at");
  return {
    title,
    locator: c.locator,
    snippet,
    published_at,
    metadata: sanitiseMetadata(c.metadata ?? {}),
    truncated,
  };
}

/** Collapses whitespace and cuts to `max` code points with the marker inside the limit. */
export function bound(value: string, max: number): { text: string; cut: boolean } {
  // Most text has nothing to collapse; testing first spares rebuilding it, the bulk of the cost.
  const collapsed = NEEDS_COLLAPSING.test(value) ? value.replace(/\s+/g, " ").trim() : value;
  if (collapsed.length <= max) return { text: collapsed, cut: false };
  const points = Array.from(collapsed);
  if (points.length <= max) return { text: collapsed, cut: false };
  const room = max - TRUNCATION_MARKER.length;
  return { text: points.slice(0, room).join("").trimEnd() + TRUNCATION_MARKER, cut: true };
}

/**
 * Copies metadata into null-prototype objects within the key, depth, string and array bounds,
 * dropping secret-named keys and redacting secrets in string values at every depth (the patterns
 * of `redact`). The walk is iterative so input nesting cannot exhaust the stack; nesting past the
 * depth is dropped.
 */
export function sanitiseMetadata(input: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = Object.create(null);
  type Job = { from: unknown; into: Record<string, unknown> | unknown[]; depth: number };
  const jobs: Job[] = [{ from: input, into: root, depth: 1 }];
  for (let job = jobs.pop(); job !== undefined; job = jobs.pop()) {
    const { from, into, depth } = job;
    const place = (value: unknown, put: (v: unknown) => void) => {
      if (value === null || typeof value === "boolean") return put(value);
      if (typeof value === "number") return Number.isFinite(value) ? put(value) : undefined;
      // Redacted before the cut, so the cut cannot leave a piece of a secret too short to match.
      if (typeof value === "string") {
        return put(bound(redactSecrets(value), MAX_METADATA_STRING_CHARS).text);
      }
      if (typeof value !== "object" || depth >= MAX_METADATA_DEPTH) return;
      const child: Record<string, unknown> | unknown[] = Array.isArray(value)
        ? []
        : Object.create(null);
      put(child);
      jobs.push({ from: value, into: child, depth: depth + 1 });
    };
    if (Array.isArray(from)) {
      const out = into as unknown[];
      for (const item of from.slice(0, MAX_METADATA_ARRAY_ITEMS)) place(item, (v) => out.push(v));
      continue;
    }
    const out = into as Record<string, unknown>;
    let keys = 0;
    for (const key of Object.keys(from as object)) {
      if (keys === MAX_METADATA_KEYS) break;
      if (key.length > MAX_METADATA_KEY_CHARS || POISON_KEYS.has(key) || SECRET_KEY.test(key)) {
        continue;
      }
      keys++;
      place((from as Record<string, unknown>)[key], (v) => {
        out[key] = v;
      });
    }
  }
  return root;
}
