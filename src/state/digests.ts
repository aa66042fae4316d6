/**
 * The digests by which anything derived from a search or a caller reaches a store: HMAC-SHA-256
 * under the state's secret, so whoever reads the store learns no query and no `sub`, and SHA-256
 * where a key needs only a fixed size. Web Crypto only, for every runtime.
 */

const encoder = new TextEncoder();

export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** SHA-256 of a text, in hex: keys of a fixed size whatever the request's. */
export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/** HMAC-SHA-256 of a text under `secret`, in hex; the key is imported once, on first use. */
export function hmacHex(secret: string): (text: string) => Promise<string> {
  let key: Promise<CryptoKey> | null = null;
  return async (text) => {
    key ??= crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    return hex(new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(text))));
  };
}
