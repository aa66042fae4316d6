/**
 * The one form of address the client address can name without ipaddr.js: strict dotted-decimal
 * IPv4, as a peer or a proxy writes it (possibly with a port), which is what CF-Connecting-IP and
 * most sockets say. Anything else (IPv6, a zone, brackets, a mapped address, no address at all)
 * is left to src/io/ip-rules.ts, loaded for it.
 *
 * Invariant: for every text it answers, the answer is exactly what ip-rules' parseHostAddress then
 * hostKey give (tests/client-address.test.ts checks it against them); it answers null, never a
 * guess, for every other text.
 */

/** An octet in decimal with no leading zero, 0 to 255 (ip-rules refuses `010`, as octal-prone). */
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";

/** Four octets, then an optional port, as parseHostAddress reads an IPv4 host with a port. */
const DOTTED_IPV4 = new RegExp(`^(${OCTET}(?:\\.${OCTET}){3})(?::\\d+)?$`);

/** The IPv4 address `written` names (`192.0.2.7`, `192.0.2.7:5678`), or null for any other form. */
export function dottedIpv4(written: string): string | null {
  return DOTTED_IPV4.exec(written.trim())?.[1] ?? null;
}
