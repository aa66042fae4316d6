/**
 * Bounds every field of a provider's answer (docs/protocol.md, "What the gateway does with an
 * answer") before anything else reads it, and can report each cut, so conformance judges a
 * provider by exactly what the gateway would do.
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
import { redact, redactSecrets, SECRET_KEY } from "../io/redact.ts";
import { wellFormed } from "../io/well-formed.ts";

/**
 * Whitespace other than single inner spaces, inside the text: any `\s` character but the space,
 * or two spaces in a row. A space at either end is tested apart: anchored alternatives made one
 * pattern scan every position several times, the larger share of sanitising a candidate. Global,
 * so needsCollapsing can start it where its own ASCII scan stopped (`lastIndex`).
 */
const NEEDS_COLLAPSING =
  /[\t-\r\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF]| {2}/g;

const SPACE = 0x20;

/** Keys that would reach an object's prototype in a careless consumer. */
export const POISON_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Something sanitiseMetadata cut or removed, at a path such as `candidates[0].metadata.tags[3]`. */
export type MetadataCut =
  | { path: string; kind: "string_cut" | "too_deep" | "long_key" }
  | { path: string; kind: "poison_key" | "secret_key"; key: string }
  /** `count` is how many there were of what the gateway would keep; it keeps the first bound. */
  | { path: string; kind: "items_dropped" | "keys_dropped"; count: number };

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
    if (locatorTooLong(c.locator)) {
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

/** One candidate within its bounds; `report` hears of every metadata cut, with paths below `at`. */
export function sanitiseCandidate(
  c: WireCandidate,
  report?: (cut: MetadataCut) => void,
  at = "metadata",
): Candidate {
  const truncated: Candidate["truncated"] = [];
  const title = bound(c.title, MAX_TITLE_CHARS);
  if (title.cut) truncated.push("title");
  const snippet = bound(c.snippet ?? "", MAX_SNIPPET_CHARS);
  if (snippet.cut) truncated.push("snippet");
  let published_at: string | null = null;
  if (c.published_at != null) {
    const date = bound(c.published_at, MAX_PUBLISHED_AT_CHARS);
    if (date.cut) truncated.push("published_at");
    published_at = date.text;
  }
  return {
    title: title.text,
    locator: wellFormed(c.locator),
    snippet: snippet.text,
    published_at,
    metadata: sanitiseMetadata(c.metadata ?? {}, report, at),
    truncated,
  };
}

/** Whether text has whitespace to collapse: a tab, a newline, a run, or space at either end. */
function needsCollapsing(value: string): boolean {
  const last = value.length - 1;
  if (value.charCodeAt(0) === SPACE || value.charCodeAt(last) === SPACE) return true;
  // One pass over ASCII text; the first character past it hands the rest to the pattern, which
  // knows the Unicode spaces. Most titles and snippets are ASCII, and a loop beats the pattern.
  let space = false;
  for (let i = 0; i <= last; i++) {
    const c = value.charCodeAt(i);
    if (c > 0x7e) {
      NEEDS_COLLAPSING.lastIndex = i;
      return NEEDS_COLLAPSING.test(value);
    }
    if (c === SPACE) {
      if (space) return true;
      space = true;
    } else {
      if (c >= 0x09 && c <= 0x0d) return true;
      space = false;
    }
  }
  return false;
}

/** Collapses whitespace and cuts to `max` code points with the marker inside the limit. */
export function bound(text: string, max: number): { text: string; cut: boolean } {
  const value = wellFormed(text);
  // Most text has nothing to collapse; testing first spares rebuilding it, the bulk of the cost.
  const collapsed = needsCollapsing(value) ? value.replace(/\s+/g, " ").trim() : value;
  if (collapsed.length <= max) return { text: collapsed, cut: false };
  const points = Array.from(collapsed);
  if (points.length <= max) return { text: collapsed, cut: false };
  const room = max - TRUNCATION_MARKER.length;
  return { text: points.slice(0, room).join("").trimEnd() + TRUNCATION_MARKER, cut: true };
}

/** Whether a locator is too long to keep: a cut locator would point at the wrong page. */
export function locatorTooLong(locator: string): boolean {
  // UTF-16 length bounds the code point count from above, so only long locators are counted.
  return locator.length > MAX_LOCATOR_CHARS && Array.from(locator).length > MAX_LOCATOR_CHARS;
}

/**
 * Copies metadata into null-prototype objects within the key, depth, string and array bounds,
 * dropping secret-named keys and redacting secrets in string values at every depth (the patterns
 * of `redact`). The walk is iterative so input nesting cannot exhaust the stack; nesting past the
 * depth is dropped. `report`, when given, hears of every cut, with paths below `at`.
 */
export function sanitiseMetadata(
  input: Record<string, unknown>,
  report?: (cut: MetadataCut) => void,
  at = "metadata",
): Record<string, unknown> {
  const root: Record<string, unknown> = Object.create(null);
  const jobs: MetadataJob[] = [{ from: input, into: root, depth: 1, path: at }];
  for (let job = jobs.pop(); job !== undefined; job = jobs.pop()) {
    const { from, into, depth, path } = job;
    if (Array.isArray(from)) {
      const out = into as unknown[];
      const kept = Math.min(from.length, MAX_METADATA_ARRAY_ITEMS);
      for (let i = 0; i < kept; i++) {
        const value = copied(from[i], depth, report ? `${path}[${i}]` : "", report, jobs);
        if (value !== SKIP) out.push(value);
      }
      if (from.length > kept) report?.({ path, kind: "items_dropped", count: from.length });
      continue;
    }
    const out = into as Record<string, unknown>;
    let kept = 0;
    let over = 0;
    for (const key of Object.keys(from as object)) {
      if (key.length > MAX_METADATA_KEY_CHARS) {
        report?.({ path, kind: "long_key" });
      } else if (POISON_KEYS.has(key)) {
        report?.({ path, kind: "poison_key", key });
      } else if (SECRET_KEY.test(key)) {
        report?.({ path, kind: "secret_key", key });
      } else if (kept < MAX_METADATA_KEYS) {
        kept++;
        const value = copied(
          (from as Record<string, unknown>)[key],
          depth,
          report ? `${path}.${key}` : "",
          report,
          jobs,
        );
        if (value !== SKIP) out[wellFormed(key)] = value;
      } else if (report === undefined) {
        break;
      } else {
        // Counted on, only to say how many there were.
        over++;
      }
    }
    if (over > 0) report?.({ path, kind: "keys_dropped", count: kept + over });
  }
  return root;
}

/** One level of metadata still to copy: `from` into the empty `into`, at `depth`, named `path`. */
type MetadataJob = {
  from: unknown;
  into: Record<string, unknown> | unknown[];
  depth: number;
  path: string;
};

/** What copied() returns for a value that is dropped. */
const SKIP: unique symbol = Symbol("skip");

/**
 * A metadata value within its bounds, or SKIP. An object or array comes back empty, and a job to
 * fill it is pushed onto `jobs` (one function for every value, not a closure per value: this runs
 * for every metadata value of every candidate).
 */
function copied(
  value: unknown,
  depth: number,
  path: string,
  report: ((cut: MetadataCut) => void) | undefined,
  jobs: MetadataJob[],
): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : SKIP;
  // Redacted before the cut, so the cut cannot leave a piece of a secret too short to match.
  if (typeof value === "string") {
    const { text, cut } = bound(redactSecrets(value), MAX_METADATA_STRING_CHARS);
    if (cut) report?.({ path, kind: "string_cut" });
    return text;
  }
  if (typeof value !== "object") return SKIP;
  if (depth >= MAX_METADATA_DEPTH) {
    report?.({ path, kind: "too_deep" });
    return SKIP;
  }
  const child: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? []
    : Object.create(null);
  jobs.push({ from: value, into: child, depth: depth + 1, path });
  return child;
}
