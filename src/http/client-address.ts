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
 */
import type { MiddlewareHandler } from "hono";
import { CLIENT_IPV6_PREFIX_BITS } from "../protocol/admission-limits.ts";
import { type AddressRange, type IpBytes, parseIp } from "../config/env-values.ts";
import type { PeerAddress } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";

/** The one client every request of an unknown address counts as. */
export const UNKNOWN_CLIENT = "unknown";

/** Sets `clientAddress` on the context, for every route after it. */
export function clientAddressMiddleware(config: {
  peerAddress: PeerAddress;
  trustedProxies: readonly AddressRange[];
}): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const peer = config.peerAddress(c.req.raw, c.env);
    const forwarded = c.req.header("x-forwarded-for") ?? null;
    c.set("clientAddress", clientAddress(peer, forwarded, config.trustedProxies));
    await next();
  };
}

/**
 * The client a request counts as: an IPv4 address (`192.0.2.7`), an IPv6 /64
 * (`2001:db8:1:2::/64`), or UNKNOWN_CLIENT.
 */
export function clientAddress(
  peer: string | null,
  forwardedFor: string | null,
  trusted: readonly AddressRange[],
): string {
  let client = peer === null ? null : parseHost(peer);
  if (client === null) return UNKNOWN_CLIENT;
  if (forwardedFor !== null && inRanges(client, trusted)) {
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHost(hops[i] as string);
      // Not an address: nothing left of it can be trusted; the proxy that wrote it is the client.
      if (hop === null) break;
      client = hop;
      if (!inRanges(hop, trusted)) break;
    }
  }
  return clientKey(client);
}

/** Whether an address falls in any of the ranges. */
export function inRanges(address: IpBytes, ranges: readonly AddressRange[]): boolean {
  return ranges.some((range) => samePrefix(address, range.address, range.bits));
}

function samePrefix(a: IpBytes, b: IpBytes, bits: number): boolean {
  const whole = Math.floor(bits / 8);
  for (let i = 0; i < whole; i++) if (a[i] !== b[i]) return false;
  const rest = bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((a[whole] as number) & mask) === ((b[whole] as number) & mask);
}

/**
 * An address as a peer or a proxy writes it: possibly with a zone (`fe80::1%eth0`), in brackets
 * with a port (`[2001:db8::1]:443`), or IPv4 with a port (`192.0.2.7:5678`).
 */
function parseHost(written: string): IpBytes | null {
  let host = written.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed !== null) host = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(host)) host = host.slice(0, host.indexOf(":"));
  return parseIp(host.replace(/%.*$/, ""));
}

/** The client's name: IPv4 (mapped ones too) as itself, IPv6 as its /64 in hex words. */
function clientKey(address: IpBytes): string {
  if (address.subarray(0, 12).every((byte, i) => byte === (i < 10 ? 0 : 0xff))) {
    return address.subarray(12).join(".");
  }
  const words: string[] = [];
  for (let i = 0; i < CLIENT_IPV6_PREFIX_BITS / 8; i += 2) {
    words.push((((address[i] as number) << 8) | (address[i + 1] as number)).toString(16));
  }
  return `${words.join(":")}::/${CLIENT_IPV6_PREFIX_BITS}`;
}
