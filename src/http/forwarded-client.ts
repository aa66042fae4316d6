/**
 * The client address by the full rules, over ipaddr.js (src/io/ip-rules.ts): an IPv6 peer, an
 * IPv4-mapped one, a peer written with brackets or a zone, and X-Forwarded-For from a trusted
 * proxy. client-address.ts loads it on demand, so ipaddr.js stays out of the Worker's main module
 * while a plain IPv4 peer with nothing to follow is named without it.
 */
import { CLIENT_IPV6_PREFIX_BITS } from "../protocol/admission-limits.ts";
// Imported as a file, not through src/io/mod.ts: ipaddr.js is CommonJS (src/io/ip-rules.ts).
import { type CidrRange, hostKey, inRanges, parseHostAddress } from "../io/ip-rules.ts";

/**
 * The client a request counts as, an IPv4 address (`192.0.2.7`) or an IPv6 /64
 * (`2001:db8:1:2::/64`), by the invariants of client-address.ts; null when the peer is not an
 * address.
 */
export function forwardedClient(
  peer: string,
  forwardedFor: string | null,
  trusted: readonly CidrRange[],
): string | null {
  let client = parseHostAddress(peer);
  if (client === null) return null;
  if (forwardedFor !== null && inRanges(client, trusted)) {
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHostAddress(hops[i] as string);
      // Not an address: nothing left of it can be trusted; the proxy that wrote it is the client.
      if (hop === null) break;
      client = hop;
      if (!inRanges(hop, trusted)) break;
    }
  }
  return hostKey(client, CLIENT_IPV6_PREFIX_BITS);
}
