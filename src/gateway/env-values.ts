/**
 * The grammar of one environment variable, one per kind, for readSettings (settings.ts): an empty
 * or blank value is unset, a boolean is 1/true/yes/on or 0/false/no/off in any case, a number is a
 * decimal integer in range, an origin list is web origins; anything else throws a ConfigError of
 * one line that names the variable and quotes the value, cut short.
 */
import { ConfigError } from "../protocol/config-error.ts";
import { MAX_ECHOED_SETTING_CHARS } from "../protocol/limits.ts";

/** Environment variables or Workers bindings, by name. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The spellings a boolean variable accepts, in any case. */
const BOOLEAN_SPELLINGS = "1/true/yes/on or 0/false/no/off";
const ON = new Set(["1", "true", "yes", "on"]);
const OFF = new Set(["0", "false", "no", "off"]);

/**
 * A comma-separated list of web origins (`https://app.example`, a port when not the default),
 * each kept as a browser writes it in an Origin header, so a plain string comparison decides.
 */
export function origins(env: Env, name: string): string[] {
  const items = (text(env, name) ?? "").split(",").map((item) => item.trim());
  return items.filter((item) => item !== "").map((item) => {
    const url = URL.canParse(item) ? new URL(item) : null;
    // Scheme, host and port only: anything more (a path, a query, credentials) shows in href.
    if (url === null || !/^https?:$/.test(url.protocol) || url.href !== `${url.origin}/`) {
      throw new ConfigError(
        `${name} must list origins such as https://app.example, comma-separated; got ${
          quoted(item)
        }`,
      );
    }
    return url.origin;
  });
}

/** A value with surrounding space removed; null when unset or blank (an empty value is unset). */
export function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? null : value;
}

export function flag(env: Env, name: string): boolean {
  const value = text(env, name);
  if (value === null) return false;
  const word = value.toLowerCase();
  if (ON.has(word)) return true;
  if (OFF.has(word)) return false;
  throw new ConfigError(`${name} must be one of ${BOOLEAN_SPELLINGS}, got ${quoted(value)}`);
}

export function positive(env: Env, name: string): number | null {
  return integer(env, name, 1, Number.MAX_SAFE_INTEGER);
}

export function integer(env: Env, name: string, min: number, max: number): number | null {
  const value = text(env, name);
  if (value === null) return null;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) {
    const what = min === 1 && max === Number.MAX_SAFE_INTEGER
      ? "a positive integer"
      : `an integer from ${min} to ${max}`;
    throw new ConfigError(`${name} must be ${what}, got ${quoted(value)}`);
  }
  return n;
}

/** The value as one line of JSON, cut short: an error line must stay one line. */
function quoted(value: string): string {
  return JSON.stringify(
    value.length > MAX_ECHOED_SETTING_CHARS
      ? `${value.slice(0, MAX_ECHOED_SETTING_CHARS)}...`
      : value,
  );
}
