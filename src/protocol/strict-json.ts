/**
 * Reads one JSON object strictly, for request bodies. JSON.parse decides what is JSON and builds the
 * value, so numbers and strings decode exactly as everywhere else; a scan of the text then refuses
 * what JSON.parse lets through silently:
 *
 * - a string (value or key) holding a lone UTF-16 surrogate, written as a `\u` escape: it has no
 *   UTF-8 form, so the same text could not arrive in a GET parameter or in raw bytes;
 * - a key repeated inside a nested object (JSON.parse keeps the last one and says nothing).
 *
 * The top-level keys come back in the order written, repeats kept, so that the caller can refuse a
 * repeated field with the same code and field as a repeated GET parameter.
 *
 * Why a scan of our own: JSON.parse cannot report repeated keys, the AST parsers on npm build a
 * tree for the whole body (up to 1 MiB) and the tolerant ones accept more than JSON by default.
 * This scan only follows strings and brackets of text JSON.parse has already accepted, so it cannot
 * disagree with it about what JSON is. It is iterative: its stack is an array, at most one entry
 * per bracket of the (bounded) body.
 */
import { isRecord, parseJson } from "./json-value.ts";

export type JsonObjectRead =
  | { ok: true; value: Record<string, unknown>; keys: string[] }
  | { ok: false; problem: "not_json" | "not_object" | "lone_surrogate" }
  | { ok: false; problem: "repeated_key"; key: string };

export function readJsonObject(text: string): JsonObjectRead {
  const value = parseJson(text);
  if (value === undefined) return { ok: false, problem: "not_json" };
  if (!isRecord(value)) return { ok: false, problem: "not_object" };
  const scanned = scanObject(text);
  return scanned.ok ? { ok: true, value, keys: scanned.keys } : scanned;
}

type Scan =
  | { ok: true; keys: string[] }
  | { ok: false; problem: "lone_surrogate" }
  | { ok: false; problem: "repeated_key"; key: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJECT = 1;
const ARRAY = 0;

/**
 * The plain run of a string: anything but a quote, a surrogate or the escape of one (those need a
 * closer look). Valid JSON text is assumed: an escape is well formed.
 */
const PLAIN_RUN = /(?:[^"\\\uD800-\uDFFF]+|\\[^u]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*/y;

/**
 * Walks valid JSON text whose top level is an object, keeping a stack of the open brackets and,
 * for each nested object that has keys, the keys seen so far.
 */
function scanObject(text: string): Scan {
  const open: number[] = [];
  // Per nested depth: its first key, then, once there is a second, all of them.
  const seen: Array<Set<string> | string | undefined> = [];
  const keys: string[] = [];
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return { ok: false, problem: "lone_surrogate" };
      if (expectKey) {
        const body = text.slice(i + 1, end - 1);
        const key = body.includes("\\") ? JSON.parse(text.slice(i, end)) as string : body;
        const depth = open.length;
        if (depth === 1) {
          keys.push(key);
        } else {
          const before = seen[depth];
          if (before === key || (typeof before === "object" && before.has(key))) {
            return { ok: false, problem: "repeated_key", key };
          }
          if (before === undefined) seen[depth] = key;
          else if (typeof before === "string") seen[depth] = new Set([before, key]);
          else before.add(key);
        }
        expectKey = false;
      }
      i = end;
      continue;
    }
    if (c === 0x7b /* { */) {
      open.push(OBJECT);
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(ARRAY);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      // The keys of the closing object (if any) are no longer needed.
      if (seen.length > open.length) seen.length = open.length;
      open.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] === OBJECT;
    }
    i++;
  }
  return { ok: true, keys };
}

/**
 * The index just past the string that opens at `start`, or -1 when the string it denotes holds a
 * lone surrogate (raw or escaped: the decoded code units are what count).
 */
function stringEnd(text: string, start: number): number {
  PLAIN_RUN.lastIndex = start + 1;
  PLAIN_RUN.test(text);
  let i = PLAIN_RUN.lastIndex;
  let highPending = false;
  for (;;) {
    let unit = text.charCodeAt(i);
    if (unit === QUOTE) return highPending ? -1 : i + 1;
    if (unit === BACKSLASH) {
      if (text.charCodeAt(i + 1) === 0x75 /* u */) {
        unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
        i += 6;
      } else {
        // Any other escape stands for an ASCII character.
        unit = 0;
        i += 2;
      }
    } else {
      i++;
    }
    const high = unit >= 0xd800 && unit <= 0xdbff;
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    if (low !== highPending) return -1;
    highPending = high;
  }
}
