/**
 * A search's identity, for coalescing (docs/envelope.md, "Coalescing"): two searches with the
 * same identity would contact the same providers with the same request on behalf of callers the
 * providers cannot tell apart, so one fan-out may answer both.
 */
import type { SearchRequest } from "../protocol/search-request.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { type Caller, subjectOf } from "../core/caller.ts";

/**
 * JSON with every object's keys sorted, so equal values always give equal text; a property whose
 * value is undefined is left out, as JSON.stringify leaves it out. Built in one string, without the
 * arrays of entries a map and join would make for every object.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      // As JSON.stringify inside join: what has no JSON text (undefined, a function) is empty.
      out += canonicalJson(value[i]) ?? "";
    }
    return `${out}]`;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    let out = "{";
    for (const key of Object.keys(record).sort()) {
      const item = record[key];
      if (item === undefined) continue;
      if (out.length > 1) out += ",";
      out += `${JSON.stringify(key)}:${canonicalJson(item)}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

/** Whether a provider's answer is the same for anyone: it is public and receives no token. */
export function isPublic(spec: ProviderSpec): boolean {
  return spec.auth.type !== "gateway-token" && spec.sensitivity === "public";
}

/** The scopes a caller was granted, sorted: what an identity keys on of who asks. */
export function entitlementsOf(caller: Caller): string[] {
  return caller.kind === "token" ? [...caller.scopes].sort() : [];
}

/**
 * The canonical JSON of the parsed request (defaults filled in, `view` left out: it only shapes
 * the answer), the scopes the caller was granted, and, when `run` holds a provider whose answer
 * may depend on the caller, the caller's `sub`. The text itself is the key:
 * it lives only while its fan-out is in flight, it is no longer than the request it describes, and
 * equal texts are exactly the identical searches, where a digest would cost a hash (on Node a trip
 * through the thread pool) on every search.
 */
export function searchIdentity(
  request: SearchRequest,
  caller: Caller,
  run: readonly ProviderSpec[],
): string {
  const personal = !run.every(isPublic);
  return canonicalJson({
    // `view` undefined is left out, as a rest pattern would leave it (and costs less).
    request: { ...request, view: undefined },
    entitlements: entitlementsOf(caller),
    ...(personal ? { sub: subjectOf(caller) } : {}),
  });
}
