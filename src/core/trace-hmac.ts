/**
 * The HMAC a trace writes and replay recomputes to match a hashed locator, under
 * TRACEFETCH_TRACE_SECRET: io/digests.ts labels the value with its purpose, so a query's HMAC never
 * equals a locator's.
 */
import { keyedHmac } from "../io/digests.ts";

export type TraceLabel = "query" | "sub" | "locator";

/** The HMAC of a labelled value, in base64url without padding. */
export type TraceHasher = (label: TraceLabel, value: string) => Promise<string>;

export function traceHasher(secret: Uint8Array): Promise<TraceHasher> {
  const mac = keyedHmac(secret, "base64url");
  return Promise.resolve(async (label, value) => await mac(label, value));
}
