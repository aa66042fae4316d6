/**
 * HMAC-SHA-256 under TRACEFETCH_TRACE_SECRET, as a trace writes it and as replay recomputes it to
 * match a hashed locator: the value is labelled first, so a query's HMAC never equals a locator's.
 */

export type TraceLabel = "query" | "sub" | "locator";

/** The HMAC of a labelled value, in base64url without padding. */
export type TraceHasher = (label: TraceLabel, value: string) => Promise<string>;

export async function traceHasher(secret: Uint8Array): Promise<TraceHasher> {
  const key = await crypto.subtle.importKey(
    "raw",
    secret as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const encoder = new TextEncoder();
  return async (label, value) => {
    const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${label}\n${value}`));
    return base64url(new Uint8Array(mac));
  };
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
