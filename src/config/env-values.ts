/**
 * The grammar of one environment variable, one per kind, for readSettings (settings.ts): an empty
 * or blank value is unset, a boolean is 1/true/yes/on or 0/false/no/off in any case, a number is a
 * decimal integer in range, an origin list is web origins, an address list is IP addresses and
 * CIDR ranges; anything else throws a ConfigError of one line that names the variable and quotes
 * the value, cut short.
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

/**
 * An IPv4 or IPv6 address as 16 bytes, IPv4 as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so
 * one comparison serves both families.
 */
export type IpBytes = Uint8Array;

/** A CIDR range: the addresses whose first `bits` bits are those of `address` (an IPv4 /n is 96 + n). */
export type AddressRange = { readonly address: IpBytes; readonly bits: number };

/** Where an IPv4 address sits in its IPv4-mapped IPv6 form: after 80 zero bits and 16 one bits. */
const IPV4_MAPPED_BITS = 96;
const IPV4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/**
 * A comma-separated list of IPv4 and IPv6 addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`,
 * `192.0.2.7`); an address alone is a range of one.
 */
export function addressRanges(env: Env, name: string): AddressRange[] {
  const items = (text(env, name) ?? "").split(",").map((item) => item.trim());
  return items.filter((item) => item !== "").map((item) => {
    const range = parseRange(item);
    if (range === null) {
      throw new ConfigError(
        `${name} must list IP addresses or CIDR ranges such as 10.0.0.0/8 or fd00::/8, comma-separated; got ${
          quoted(item)
        }`,
      );
    }
    return range;
  });
}

function parseRange(item: string): AddressRange | null {
  const [host = "", length, ...rest] = item.split("/");
  const address = parseIp(host);
  if (address === null || rest.length > 0) return null;
  const v4 = !host.includes(":");
  const max = v4 ? 32 : 128;
  if (length === undefined) return { address, bits: 128 };
  const bits = /^\d{1,3}$/.test(length) ? Number(length) : Number.NaN;
  if (!(bits <= max)) return null;
  return { address, bits: v4 ? IPV4_MAPPED_BITS + bits : bits };
}

/** An address as written (no zone, no brackets, no port); null when it is not one. */
export function parseIp(value: string): IpBytes | null {
  if (!value.includes(":")) {
    const v4 = parseIpv4(value);
    return v4 === null ? null : new Uint8Array([...IPV4_MAPPED_PREFIX, ...v4]);
  }
  // The URL parser validates IPv6 and writes it in hex words alone, one `::` at most.
  const url = `http://[${value}]`;
  if (!/^[\da-f:.]+$/i.test(value) || !URL.canParse(url)) return null;
  const [head = "", tail = ""] = new URL(url).hostname.slice(1, -1).split("::");
  const words = (side: string) => side === "" ? [] : side.split(":").map((w) => parseInt(w, 16));
  const [before, after] = [words(head), words(tail)];
  const all = [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  return new Uint8Array(all.flatMap((word) => [word >> 8, word & 0xff]));
}

/** Dotted-decimal IPv4; a leading zero is refused, since some parsers read it as octal. */
function parseIpv4(value: string): number[] | null {
  const parts = value.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((part) => /^(0|[1-9]\d{0,2})$/.test(part) ? Number(part) : Number.NaN);
  return bytes.every((byte) => byte <= 255) ? bytes : null;
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
