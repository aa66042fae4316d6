/**
 * JSON as the route fuzz suites write it on the wire: objects keep repeated and `__proto__` keys,
 * numbers may be raw text, and a long string is a unit and a count (so a counterexample prints as
 * what was sent, not as a megabyte of it). Also what a strict reader finds in such a value: a lone
 * UTF-16 surrogate anywhere (JSON.stringify writes it as a `\ud800` escape), a key repeated inside
 * one object, and the value JSON.parse makes of it.
 */

export type Wire =
  | null
  | boolean
  | number
  | string
  | Wire[]
  | { obj: Array<[string, Wire]> }
  | { raw: string }
  | { long: string; n: number };

const isObj = (w: Wire): w is { obj: Array<[string, Wire]> } =>
  typeof w === "object" && w !== null && !Array.isArray(w) && "obj" in w;

/** The text of a long string. */
export function longString(unit: string, n: number): string {
  return unit.repeat(n);
}

/** The JSON text of a value, compact, every key kept in order. */
export function wireText(w: Wire): string {
  if (w === null || typeof w !== "object") return JSON.stringify(w) ?? "null";
  if (Array.isArray(w)) return `[${w.map(wireText).join(",")}]`;
  if ("raw" in w) return w.raw;
  if ("long" in w) return JSON.stringify(longString(w.long, w.n));
  return `{${w.obj.map(([k, v]) => `${JSON.stringify(k)}:${wireText(v)}`).join(",")}}`;
}

/** What JSON.parse makes of the value (the last of repeated keys wins). */
export function wireValue(w: Wire): unknown {
  return JSON.parse(wireText(w));
}

// ES2024's String.prototype.isWellFormed, on Node 20, Deno and workerd alike; the project's type
// library is ES2023.
export const wellFormed = (s: string) =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Whether any string of the value, key or value, holds a lone surrogate. */
export function hasLoneSurrogate(w: Wire): boolean {
  if (typeof w === "string") return !wellFormed(w);
  if (w === null || typeof w !== "object") return false;
  if (Array.isArray(w)) return w.some(hasLoneSurrogate);
  if ("raw" in w) return false;
  if ("long" in w) return !wellFormed(w.long.repeat(Math.min(w.n, 2)));
  return w.obj.some(([k, v]) => !wellFormed(k) || hasLoneSurrogate(v));
}

/** Whether some object inside the value (the value itself included) repeats a key. */
export function hasRepeatedKey(w: Wire): boolean {
  if (w === null || typeof w !== "object") return false;
  if (Array.isArray(w)) return w.some(hasRepeatedKey);
  if (!isObj(w)) return false;
  const keys = w.obj.map(([k]) => k);
  return new Set(keys).size !== keys.length || w.obj.some(([, v]) => hasRepeatedKey(v));
}

/** The code points of a string, or of a long one, without building it when it is long. */
export function points(w: string | { long: string; n: number }): number {
  return typeof w === "string" ? Array.from(w).length : Array.from(w.long).length * w.n;
}

/** Whether a JSON text holds a `\ud800`-style escape of a lone surrogate. */
export function hasLoneSurrogateEscape(text: string): boolean {
  const escapes =
    /\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}/g;
  for (const m of text.matchAll(escapes)) {
    // A high surrogate escape followed by a low one is a pair; anything else stands alone.
    if (m[1] === undefined || m[2] === undefined) {
      // An escaped backslash before it makes it plain text (`\\ud800`): count the backslashes.
      let slashes = 0;
      for (let i = (m.index ?? 0) - 1; i >= 0 && text[i] === "\\"; i--) slashes++;
      if (slashes % 2 === 0) return true;
    }
  }
  return false;
}

/** Every string in a parsed JSON value, keys included. */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const v of value) stringsOf(v, out); }
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}
