/**
 * IP addresses and CIDR ranges, read once and judged once, over ipaddr.js: the trusted proxies of
 * the client address, the private ranges an operator opens for fetching pages, and the one rule
 * that decides whether an address may be fetched from at all.
 *
 * Invariants:
 * - Written forms are strict: IPv4 is four dotted decimals with no leading zero (some parsers read
 *   `010` as octal, `0x7f.1` as hex, `127.1` as 127.0.0.1), so nothing here reads an address
 *   differently from the resolver that will be used.
 * - An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is its IPv4 address, for ranges and for the
 *   global rule alike; NAT64 (RFC 6052) and 6to4 (RFC 3056) addresses are judged by the IPv4
 *   address they carry.
 * - Only a global unicast address is fetchable by default: everything ipaddr.js names a special
 *   range (private, loopback, link-local, unique-local, carrier-grade NAT, multicast, reserved,
 *   documentation, Teredo, ...) is refused, and IPv6 outside 2000::/3 too.
 */
import ipaddr from "ipaddr.js";

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A CIDR range: its network address (IPv4-mapped ranges unwrapped) and prefix length. */
export type CidrRange = { readonly address: IpAddress; readonly bits: number };

/** RFC 6052's well-known NAT64 prefix: the IPv4 address is the last 32 bits. */
const NAT64: CidrRange = { address: ipaddr.IPv6.parse("64:ff9b::"), bits: 96 };

/** RFC 3056's 6to4: the IPv4 address is bits 16 to 47. */
const SIX_TO_FOUR: CidrRange = { address: ipaddr.IPv6.parse("2002::"), bits: 16 };

/** RFC 4291's global unicast block: IPv6 outside it is not on the public internet today. */
const IPV6_GLOBAL: CidrRange = { address: ipaddr.IPv6.parse("2000::"), bits: 3 };

/** ipaddr.js's name for an address in no special range. */
const UNICAST = "unicast";

/**
 * An address as written: strict dotted-decimal IPv4, or IPv6 (no zone, no brackets, no port),
 * IPv4-mapped IPv6 unwrapped to its IPv4. Null when it is not one.
 */
export function parseAddress(text: string): IpAddress | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    // isValidFourPartDecimal accepts `010`; a leading zero is refused (see the invariants).
    if (text.split(".").some((part) => part.length > 1 && part.startsWith("0"))) return null;
    return ipaddr.IPv4.parse(text);
  }
  if (!text.includes(":") || text.includes("%") || !ipaddr.IPv6.isValid(text)) return null;
  return unwrapMapped(ipaddr.IPv6.parse(text));
}

/**
 * An address as a peer or a proxy writes it (X-Forwarded-For, a socket's remote address): possibly
 * with a zone (`fe80::1%eth0`), in brackets with a port (`[2001:db8::1]:443`), or IPv4 with a port
 * (`192.0.2.7:5678`). Null when it is not one.
 */
export function parseHostAddress(written: string): IpAddress | null {
  let host = written.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed !== null) host = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(host)) host = host.slice(0, host.indexOf(":"));
  return parseAddress(host.replace(/%.*$/, ""));
}

/**
 * One name for every address of a host: IPv4 (a mapped one too) as itself, IPv6 as its network of
 * `ipv6Bits` (a multiple of 16) in uncompressed hex words (`2001:db8:0:0::/64`), since one host
 * may hold a whole /64.
 */
export function hostKey(address: IpAddress, ipv6Bits: number): string {
  const plain = unwrapMapped(address);
  if (plain.kind() === "ipv4") return plain.toString();
  const words = (plain as ipaddr.IPv6).parts.slice(0, ipv6Bits / 16);
  return `${words.map((word) => word.toString(16)).join(":")}::/${ipv6Bits}`;
}

/** A CIDR range (`10.0.0.0/8`, `fd00::/8`) or one address as a range of one; null otherwise. */
export function parseCidr(text: string): CidrRange | null {
  const slash = text.indexOf("/");
  const address = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (address === null) return null;
  const max = address.kind() === "ipv4" ? 32 : 128;
  if (slash === -1) return { address, bits: max };
  const written = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(written) || Number(written) > max) return null;
  return { address, bits: Number(written) };
}

/** Whether the address lies in any of the ranges (IPv4 never matches an IPv6 range, nor back). */
export function inRanges(address: IpAddress, ranges: readonly CidrRange[]): boolean {
  const plain = unwrapMapped(address);
  return ranges.some((range) => inRange(plain, range));
}

function inRange(address: IpAddress, range: CidrRange): boolean {
  if (address.kind() !== range.address.kind()) return false;
  return address.match(range.address as never, range.bits);
}

/**
 * What kind of address it is, for a refusal's message and the global rule: ipaddr.js's range name
 * (`private`, `loopback`, `linkLocal`, `uniqueLocal`, ...), judged on the IPv4 address a mapped,
 * NAT64 or 6to4 address carries; `unicast` only for a global unicast address.
 */
export function addressRange(address: IpAddress): string {
  const plain = embeddedIpv4(unwrapMapped(address));
  const range = plain.range();
  if (range !== UNICAST) return range;
  if (plain.kind() === "ipv6" && !inRange(plain, IPV6_GLOBAL)) return "reserved";
  return UNICAST;
}

/** Whether the address is global unicast: the only kind a page may be fetched from by default. */
export function isGlobalUnicast(address: IpAddress): boolean {
  return addressRange(address) === UNICAST;
}

/** The address written as the runtime's connect call wants it: dotted IPv4 or compact IPv6. */
export function addressText(address: IpAddress): string {
  return address.kind() === "ipv4"
    ? address.toString()
    : (address as ipaddr.IPv6).toRFC5952String();
}

function unwrapMapped(address: IpAddress): IpAddress {
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address();
  }
  return address;
}

/** The IPv4 address a NAT64 or 6to4 address carries; any other address as it is. */
function embeddedIpv4(address: IpAddress): IpAddress {
  if (address.kind() !== "ipv6") return address;
  const bytes = address.toByteArray();
  if (inRange(address, NAT64)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (inRange(address, SIX_TO_FOUR)) return new ipaddr.IPv4(bytes.slice(2, 6));
  return address;
}
