/**
 * The grammar of the environment, one valibot schema per kind of variable, and the one reader that
 * applies a table of them (settings.ts): an empty or blank value is unset, a boolean is
 * 1/true/yes/on or 0/false/no/off in any case, a number is a decimal integer in range, an origin
 * list is web origins, an address list is IP addresses and CIDR ranges, a URL meets one check (a
 * Redis URL, or an endpoint under the URL policy) and a secret another (a least length in bytes).
 * Anything else throws a ConfigError of one line that names the variable and quotes the value, cut
 * short; a URL or a secret is never quoted.
 */
import * as v from "valibot";
import { ConfigError } from "../protocol/config-error.ts";
import { MAX_ECHOED_SETTING_CHARS } from "../protocol/limits.ts";
import { nearestName } from "../protocol/did-you-mean.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import type { CidrRange } from "../io/ip-rules.ts";
import { parseRedisUrl, REDIS_SCHEMES_TEXT } from "../state/redis-url.ts";

/** Environment variables or Workers bindings, by name. */
export type Env = Readonly<Record<string, string | undefined>>;

/** One variable's schema: its raw value (undefined when unset) in, its setting out. */
export type Variable<T> = v.GenericSchema<string | undefined, T>;

/** Why a value is refused, worded to follow the variable's name. */
export type Refusal = { refused: string };

export const refuse = (refused: string): Refusal => ({ refused });

const isRefusal = (value: unknown): value is Refusal =>
  typeof value === "object" && value !== null && "refused" in value;

/**
 * A variable's schema from a function of its trimmed value (null when unset or blank) that gives
 * the setting or a refusal.
 */
export function variable<T>(read: (value: string | null) => T | Refusal): Variable<T> {
  return v.pipe(
    v.optional(v.string()),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = dataset.value?.trim();
      const result = read(value === undefined || value === "" ? null : value);
      if (!isRefusal(result)) return result;
      addIssue({ message: result.refused });
      return NEVER;
    }),
  ) as Variable<T>;
}

/**
 * Reads every variable of `table` from `env` with its schema; throws ConfigError naming the first
 * one that is not understood.
 */
export function readVariables<T extends Record<string, Variable<unknown>>>(
  env: Env,
  table: T,
): { [K in keyof T]: v.InferOutput<T[K]> } {
  const values: Record<string, string | undefined> = {};
  // Only the table's own names, and only text: a Workers binding is not a variable.
  for (const name of Object.keys(table)) {
    const value = env[name];
    values[name] = typeof value === "string" ? value : undefined;
  }
  const parsed = v.safeParse(v.object(table), values, { abortEarly: true });
  if (parsed.success) return parsed.output as { [K in keyof T]: v.InferOutput<T[K]> };
  const [issue] = parsed.issues;
  const name = String(issue.path?.[0]?.key ?? "a variable");
  throw new ConfigError(`${name} ${issue.message}`);
}

/**
 * The names in `env` under one of `prefixes` that no root reads but that are a likely slip for one
 * that it does, each as a line saying so: such a variable is ignored, and its author should know.
 */
export function misspelled(
  env: Env,
  prefixes: readonly string[],
  known: readonly string[],
): string[] {
  const lines: string[] = [];
  const names = new Set(known);
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || names.has(name)) continue;
    if (!prefixes.some((prefix) => name.startsWith(prefix))) continue;
    const meant = nearestName(name, known);
    if (meant !== null) {
      lines.push(
        `${name} is not a variable this gateway reads (did you mean ${meant}?): it is ignored`,
      );
    }
  }
  return lines;
}

/** A value with surrounding space removed; null when unset or blank (an empty value is unset). */
export const text: Variable<string | null> = variable((value) => value);

/** The spellings a boolean variable accepts, in any case. */
const BOOLEAN_SPELLINGS = "1/true/yes/on or 0/false/no/off";
const ON = new Set(["1", "true", "yes", "on"]);
const OFF = new Set(["0", "false", "no", "off"]);

/** A boolean; `unset` (false unless given) when the variable is unset or blank. */
export function flag(): Variable<boolean>;
export function flag<U extends boolean | null>(unset: U): Variable<boolean | U>;
export function flag(unset: boolean | null = false): Variable<boolean | null> {
  return variable((value) => {
    if (value === null) return unset;
    const word = value.toLowerCase();
    if (ON.has(word)) return true;
    if (OFF.has(word)) return false;
    return refuse(`must be one of ${BOOLEAN_SPELLINGS}, got ${quoted(value)}`);
  });
}

/** A decimal integer from `min` to `max`; null when unset. */
export function integer(min: number, max: number): Variable<number | null> {
  return variable((value) => {
    if (value === null) return null;
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (n >= min && n <= max) return n;
    const what = min === 1 && max === Number.MAX_SAFE_INTEGER
      ? "a positive integer"
      : `an integer from ${min} to ${max}`;
    return refuse(`must be ${what}, got ${quoted(value)}`);
  });
}

/** A positive integer; null when unset. */
export const positive: Variable<number | null> = integer(1, Number.MAX_SAFE_INTEGER);

/** A comma-separated list, blank items left out, each item read by `item` or refused. */
function list<T>(item: (text: string) => T | Refusal): Variable<T[]> {
  return variable((value) => {
    const out: T[] = [];
    for (const raw of (value ?? "").split(",").map((part) => part.trim())) {
      if (raw === "") continue;
      const read = item(raw);
      if (isRefusal(read)) return read;
      out.push(read);
    }
    return out;
  });
}

/**
 * A comma-separated list of web origins (`https://app.example`, a port when not the default),
 * each kept as a browser writes it in an Origin header, so a plain string comparison decides.
 */
export const origins: Variable<string[]> = list((item) => {
  const url = URL.canParse(item) ? new URL(item) : null;
  // Scheme, host and port only: anything more (a path, a query, credentials) shows in href.
  if (url === null || !/^https?:$/.test(url.protocol) || url.href !== `${url.origin}/`) {
    return refuse(
      `must list origins such as https://app.example, comma-separated; got ${quoted(item)}`,
    );
  }
  return url.origin;
});

/**
 * A comma-separated list of IPv4 and IPv6 addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`,
 * `192.0.2.7`), each read by `parseCidr` (src/io/ip-rules.ts's, handed down by the root, which
 * may load it on demand); an address alone is a range of one. Without a reader, a list that is set
 * is refused, never taken unchecked.
 */
export function addressRanges(
  parseCidr?: (text: string) => CidrRange | null,
): Variable<CidrRange[]> {
  return list((item) => {
    if (parseCidr === undefined) return refuse("cannot be read by this reader of the settings");
    return parseCidr(item) ??
      refuse(
        `must list IP addresses or CIDR ranges such as 10.0.0.0/8 or fd00::/8, comma-separated; got ${
          quoted(item)
        }`,
      );
  });
}

/** What a URL variable may hold: a Redis server, or an endpoint under the URL policy. */
export type UrlKind =
  | { kind: "redis"; example: string }
  | { kind: "endpoint"; allowLoopback: boolean; role?: "base" };

/**
 * The one URL check: why `value` is not a URL of this kind, worded to follow the variable's name,
 * or null. A message never echoes the URL, which may carry a password.
 */
export function urlProblem(value: string, of: UrlKind): string | null {
  if (of.kind === "endpoint") return endpointProblem(value, of.allowLoopback, of.role);
  if (parseRedisUrl(value) !== null) return null;
  return `must be a ${REDIS_SCHEMES_TEXT} URL such as ${of.example} (the value is not shown: it may hold a password)`;
}

/** A URL of this kind; null when unset. */
export function url(of: UrlKind): Variable<string | null> {
  return variable((value) => {
    if (value === null) return null;
    const problem = urlProblem(value, of);
    return problem === null ? value : refuse(problem);
  });
}

/**
 * The one secret check: why `value` is too short to key an HMAC or a signature of this kind,
 * worded to follow the variable's name, or null. A message never echoes the secret.
 */
export function secretProblem(value: string, minBytes: number): string | null {
  const bytes = new TextEncoder().encode(value).byteLength;
  return bytes < minBytes ? `must be at least ${minBytes} bytes (it has ${bytes})` : null;
}

/** A secret of at least `minBytes` bytes in UTF-8; null when unset. */
export function secret(minBytes: number): Variable<string | null> {
  return variable((value) => {
    if (value === null) return null;
    const problem = secretProblem(value, minBytes);
    return problem === null ? value : refuse(problem);
  });
}

/** An API key a header carries as it is; null when unset. */
export const apiKey: Variable<string | null> = variable((value) => {
  // A header cannot carry control characters; say so here rather than fail every search later.
  // deno-lint-ignore no-control-regex
  if (value !== null && /[\u0000-\u001f\u007f]/.test(value)) {
    return refuse("contains a control character; set the key alone");
  }
  return value;
});

/** The value as one line of JSON, cut short: an error line must stay one line. */
function quoted(value: string): string {
  return JSON.stringify(
    value.length > MAX_ECHOED_SETTING_CHARS
      ? `${value.slice(0, MAX_ECHOED_SETTING_CHARS)}...`
      : value,
  );
}
