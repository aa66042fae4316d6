/**
 * checkBounds(answer): where a provider's answer passes a bound of design 3.3. The gateway would
 * cut, drop or remove what passes, so a conforming provider stays inside every bound and loses
 * nothing on the way.
 */
import { bound, POISON_KEYS, SECRET_KEY } from "../core/sanitize.ts";
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

/**
 * `answer` is the raw JSON of an answer that already matched the v1 schema: raw, because a
 * schema's output may have dropped a `__proto__` key, and that key is one of the things to report.
 */
export function checkBounds(answer: ProviderResponse): string[] {
  const problems: string[] = [];
  const cut = (at: string, value: string | null | undefined, max: number) => {
    // The gateway's own measure: whitespace collapsed, then code points.
    if (typeof value === "string" && bound(value, max).cut) {
      problems.push(`${at} is longer than ${max} code points; the gateway would cut it`);
    }
  };
  answer.candidates.forEach((c, i) => {
    const at = `candidates[${i}]`;
    cut(`${at}.title`, c.title, MAX_TITLE_CHARS);
    cut(`${at}.snippet`, c.snippet, MAX_SNIPPET_CHARS);
    cut(`${at}.published_at`, c.published_at, MAX_PUBLISHED_AT_CHARS);
    if (Array.from(c.locator).length > MAX_LOCATOR_CHARS) {
      problems.push(
        `${at}.locator is longer than ${MAX_LOCATOR_CHARS} code points; the gateway would drop the candidate`,
      );
    }
    if (c.metadata !== undefined) problems.push(...checkMetadata(c.metadata, `${at}.metadata`));
  });
  const warnings = answer.warnings ?? [];
  if (warnings.length > MAX_WARNINGS) {
    problems.push(`${warnings.length} warnings; the gateway keeps at most ${MAX_WARNINGS}`);
  }
  warnings.forEach((w, i) => cut(`warnings[${i}]`, w, MAX_WARNING_CHARS));
  return problems;
}

/** Iterative, and never deeper than one level past the bound: input nesting cannot exhaust the stack. */
function checkMetadata(root: Record<string, unknown>, at: string): string[] {
  const problems: string[] = [];
  type Job = { value: object; path: string; depth: number };
  const jobs: Job[] = [{ value: root, path: at, depth: 1 }];
  for (let job = jobs.pop(); job !== undefined; job = jobs.pop()) {
    const { value, path, depth } = job;
    const visit = (child: unknown, childPath: string) => {
      if (typeof child === "string" && bound(child, MAX_METADATA_STRING_CHARS).cut) {
        problems.push(
          `${childPath} is longer than ${MAX_METADATA_STRING_CHARS} code points; the gateway would cut it`,
        );
      }
      if (typeof child !== "object" || child === null) return;
      if (depth >= MAX_METADATA_DEPTH) {
        problems.push(
          `${childPath} nests deeper than ${MAX_METADATA_DEPTH} levels; the gateway would drop it`,
        );
        return;
      }
      jobs.push({ value: child, path: childPath, depth: depth + 1 });
    };
    if (Array.isArray(value)) {
      if (value.length > MAX_METADATA_ARRAY_ITEMS) {
        problems.push(
          `${path} has ${value.length} items; the gateway keeps at most ${MAX_METADATA_ARRAY_ITEMS}`,
        );
      }
      value.forEach((item, i) => visit(item, `${path}[${i}]`));
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > MAX_METADATA_KEYS) {
      problems.push(
        `${path} has ${keys.length} keys; the gateway keeps at most ${MAX_METADATA_KEYS}`,
      );
    }
    for (const key of keys) {
      const shown = JSON.stringify(key.slice(0, 40));
      if (key.length > MAX_METADATA_KEY_CHARS) {
        problems.push(
          `${path} has a key longer than ${MAX_METADATA_KEY_CHARS} characters; the gateway would drop it`,
        );
      } else if (POISON_KEYS.has(key)) {
        problems.push(`${path}.${key} names a prototype; the gateway would drop it`);
      } else if (SECRET_KEY.test(key)) {
        problems.push(`${path} key ${shown} looks like a secret; the gateway would remove it`);
      } else {
        visit((value as Record<string, unknown>)[key], `${path}.${key}`);
      }
    }
  }
  return problems;
}
