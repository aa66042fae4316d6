/**
 * checkBounds(answer): where a provider's answer passes a bound of docs/protocol.md ("What the
 * gateway does with an answer"). The answer goes through the gateway's own sanitiser, and every
 * cut it reports is a problem: a conforming provider stays inside every bound and loses nothing on
 * the way.
 */
import { bound, locatorTooLong, type MetadataCut, sanitiseCandidate } from "../core/sanitize.ts";
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
} from "../protocol/limits.ts";
import type { ProviderResponse } from "../protocol/provider-wire.ts";

const FIELD_BOUNDS = {
  title: MAX_TITLE_CHARS,
  snippet: MAX_SNIPPET_CHARS,
  published_at: MAX_PUBLISHED_AT_CHARS,
} as const;

/**
 * `answer` is the raw JSON of an answer that already matched the v1 schema: raw, because a
 * schema's output may have dropped a `__proto__` key, and that key is one of the things to report.
 */
export function checkBounds(answer: ProviderResponse): string[] {
  const problems: string[] = [];
  answer.candidates.forEach((c, i) => {
    const at = `candidates[${i}]`;
    const cuts: MetadataCut[] = [];
    const { truncated } = sanitiseCandidate(c, (cut) => cuts.push(cut), `${at}.metadata`);
    for (const field of truncated) {
      problems.push(
        `${at}.${field} is longer than ${
          FIELD_BOUNDS[field]
        } code points; the gateway would cut it`,
      );
    }
    if (locatorTooLong(c.locator)) {
      problems.push(
        `${at}.locator is longer than ${MAX_LOCATOR_CHARS} code points; the gateway would drop the candidate`,
      );
    }
    problems.push(...cuts.map(describeCut));
  });
  const warnings = answer.warnings ?? [];
  if (warnings.length > MAX_WARNINGS) {
    problems.push(`${warnings.length} warnings; the gateway keeps at most ${MAX_WARNINGS}`);
  }
  warnings.forEach((w, i) => {
    // The gateway's own measure: whitespace collapsed, then code points.
    if (bound(w, MAX_WARNING_CHARS).cut) {
      problems.push(
        `warnings[${i}] is longer than ${MAX_WARNING_CHARS} code points; the gateway would cut it`,
      );
    }
  });
  return problems;
}

function describeCut(cut: MetadataCut): string {
  switch (cut.kind) {
    case "string_cut":
      return `${cut.path} is longer than ${MAX_METADATA_STRING_CHARS} code points; the gateway would cut it`;
    case "too_deep":
      return `${cut.path} nests deeper than ${MAX_METADATA_DEPTH} levels; the gateway would drop it`;
    case "long_key":
      return `${cut.path} has a key longer than ${MAX_METADATA_KEY_CHARS} characters; the gateway would drop it`;
    case "poison_key":
      return `${cut.path}.${cut.key} names a prototype; the gateway would drop it`;
    case "secret_key":
      return `${cut.path} key ${
        JSON.stringify(cut.key.slice(0, 40))
      } looks like a secret; the gateway would remove it`;
    case "items_dropped":
      return `${cut.path} has ${cut.count} items; the gateway keeps at most ${MAX_METADATA_ARRAY_ITEMS}`;
    case "keys_dropped":
      return `${cut.path} has ${cut.count} keys; the gateway keeps at most ${MAX_METADATA_KEYS}`;
    default: {
      const never: never = cut;
      throw new Error(`unhandled metadata cut ${JSON.stringify(never)}`);
    }
  }
}
