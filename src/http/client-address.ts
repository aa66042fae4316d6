/**
 * The client address: whom a request counts against where callers are bounded one by one (request
 * bodies in reading), worked out once per request and set on the context as `clientAddress`.
 *
 * Invariants:
 * - The peer is what the runtime's port says (the socket's address on Node and Deno,
 *   CF-Connecting-IP on Workers); X-Forwarded-For is read only when that peer is a trusted proxy
 *   (TRACEFETCH_TRUSTED_PROXIES), so a caller cannot name itself someone else.
 * - Behind trusted proxies the client is the rightmost X-Forwarded-For entry that is not one of
 *   them: entries to its left were written by whoever the proxies heard from, and may be made up.
 * - An IPv6 client counts by its /64 and an IPv4-mapped IPv6 address as its IPv4, so one host
 *   cannot be many clients by changing addresses or address family.
 * - An unknown peer (`app.request` in tests, a runtime that says nothing) is one shared client.
 * - ipaddr.js (forwarded-client.ts) loads with the first request whose peer is not dotted IPv4 or
 *   whose X-Forwarded-For may count; a plain IPv4 peer is named exactly as it would name it.
 */
import type { MiddlewareHandler } from "hono";
import { lazy } from "../core/lazy-module.ts";
import { dottedIpv4 } from "../io/dotted-ipv4.ts";
import type { CidrRange } from "../io/ip-rules.ts";
import type { PeerAddress } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";

/** The one client every request of an unknown address counts as. */
export const UNKNOWN_CLIENT = "unknown";

/** The full rules with ipaddr.js, a module of its own on Workers (forwarded-client.ts). */
const fullRules = lazy(() => import("./forwarded-client.ts"));

/** Sets `clientAddress` on the context, for every route after it. */
export function clientAddressMiddleware(config: {
  peerAddress: PeerAddress;
  trustedProxies: readonly CidrRange[];
}): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const peer = config.peerAddress(c.req.raw, c.env);
    const forwarded = c.req.header("x-forwarded-for") ?? null;
    c.set("clientAddress", await clientAddress(peer, forwarded, config.trustedProxies));
    await next();
  };
}

/**
 * The client a request counts as: an IPv4 address (`192.0.2.7`), an IPv6 /64
 * (`2001:db8:1:2::/64`), or UNKNOWN_CLIENT. A dotted IPv4 peer with no X-Forwarded-For to follow
 * is named here; any other peer, or one whose X-Forwarded-For may count, by the full rules.
 */
export async function clientAddress(
  peer: string | null,
  forwardedFor: string | null,
  trusted: readonly CidrRange[],
): Promise<string> {
  if (peer === null) return UNKNOWN_CLIENT;
  // X-Forwarded-For counts only from a trusted proxy: with none, or no header, the peer decides.
  const plain = forwardedFor === null || trusted.length === 0 ? dottedIpv4(peer) : null;
  if (plain !== null) return plain;
  return (await fullRules()).forwardedClient(peer, forwardedFor, trusted) ?? UNKNOWN_CLIENT;
}
