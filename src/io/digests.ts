/**
 * The digests by which anything derived from a search, a caller or a trace leaves an instance:
 * HMAC-SHA-256 under an operator's secret, so whoever reads a store or a trace learns no query, no
 * locator and no `sub`, and SHA-256 where a key or a check needs only a fixed size. This is the one
 * place that makes an HMAC.
 *
 * Invariants:
 * - Every HMAC is domain-separated: its input is `<purpose>\0<value>`, and no purpose name holds a
 *   NUL, so a flight's digest never equals a caller's, an answer's or a trace field's for any value.
 * - Web Crypto by default, for every runtime; a root may inject its runtime's own HMAC-SHA-256 as
 *   a port (node:crypto answers at once), which computes the same bytes over the same input.
 */

/** What an HMAC is for; the name is the label its input opens with. */
export type HmacPurpose =
  /** A search identity's flight in the shared state. */
  | "flight"
  /** A cached answer's identity in a shared store. */
  | "answer"
  /** A caller's search log in the shared state. */
  | "caller"
  /** A trace's query. */
  | "query"
  /** A trace's caller `sub`. */
  | "sub"
  /** A trace's non-public locator, or a fetch's URL. */
  | "locator";

/** A runtime's own HMAC-SHA-256 of `message` under `key`, computed at once. */
export type HmacPort = (key: Uint8Array, message: Uint8Array) => Uint8Array;

/** The labelled HMAC of a value, in the encoding its maker was asked for. */
export type Hmac = (purpose: HmacPurpose, value: string) => string | Promise<string>;

const encoder = new TextEncoder();

export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** SHA-256 of a text, in hex: keys of a fixed size whatever the request's. */
export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/**
 * HMAC-SHA-256 under `secret` of `<purpose>\0<value>`, in hex or base64url without padding.
 * Through `port` when the runtime gave one (the answer is then at once), else Web Crypto with the
 * key imported once, on first use.
 */
export function keyedHmac(
  secret: string | Uint8Array,
  encoding: "hex" | "base64url",
  port?: HmacPort | undefined,
): Hmac {
  const keyBytes = typeof secret === "string" ? encoder.encode(secret) : secret;
  const encode = encoding === "hex" ? hex : base64url;
  if (port !== undefined) {
    return (purpose, value) => encode(port(keyBytes, labelled(purpose, value)));
  }
  let key: Promise<CryptoKey> | null = null;
  return async (purpose, value) => {
    key ??= crypto.subtle.importKey(
      "raw",
      keyBytes as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", await key, labelled(purpose, value));
    return encode(new Uint8Array(mac));
  };
}

function labelled(purpose: HmacPurpose, value: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${purpose}\0${value}`);
}
