/**
 * The fetch policy's rules for a URL and for the addresses its host resolves to. The URL is read by
 * the WHATWG parser (the one every runtime's fetch uses), so every IPv4 form it normalises
 * (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`, percent-encoded digits) is judged as the dotted
 * address it becomes.
 */
import {
  addressRange,
  inRanges,
  type IpAddress,
  isGlobalUnicast,
  parseAddress,
} from "../io/ip-rules.ts";
import { MAX_FETCH_URL_CHARS, MAX_RESOLVED_ADDRESSES } from "../protocol/fetch-limits.ts";
import { underDomain } from "./fetch-policy.ts";
import type { FetchPolicy } from "./fetch-types.ts";

/** Where a judged URL's host points: an address written in the URL, or a name still to resolve. */
export type JudgedHost =
  | { kind: "address"; address: IpAddress }
  | { kind: "name"; name: string };

export type JudgedUrl =
  | { ok: true; url: URL; host: JudgedHost }
  | { ok: false; message: string };

/** Names that mean this machine without asking DNS (RFC 6761 section 6.3). */
const LOCALHOST = "localhost";

/** Judges a URL (absolute, or relative to `base` for a redirect's Location) before anything is sent. */
export function judgeUrl(input: string, policy: FetchPolicy, base?: URL): JudgedUrl {
  if (input.length > MAX_FETCH_URL_CHARS) {
    return { ok: false, message: `the URL is over ${MAX_FETCH_URL_CHARS} characters` };
  }
  const url = parseUrl(input, base);
  if (url === null) return { ok: false, message: "the URL cannot be parsed" };
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      message: `the scheme ${url.protocol} is not fetched (http and https only)`,
    };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, message: "a URL with credentials before the host is not fetched" };
  }
  url.hash = "";
  const host = judgeHost(url.hostname, policy);
  return host.ok ? { ok: true, url, host: host.host } : host;
}

function parseUrl(input: string, base: URL | undefined): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

function judgeHost(
  hostname: string,
  policy: FetchPolicy,
): { ok: true; host: JudgedHost } | { ok: false; message: string } {
  const bracketed = hostname.startsWith("[") && hostname.endsWith("]");
  const address = parseAddress(bracketed ? hostname.slice(1, -1) : hostname);
  if (address !== null) {
    if (policy.allowDomains.length > 0) {
      return { ok: false, message: "only the domains allow_domains lists are fetched" };
    }
    const refused = addressProblem(address, policy);
    return refused === null
      ? { ok: true, host: { kind: "address", address } }
      : { ok: false, message: `the host ${hostname} ${refused}` };
  }
  if (bracketed || hostname === "") {
    return { ok: false, message: "the host is not a name or an address" };
  }
  // `example.com.` and `example.com` are one name to DNS, and one to the policy.
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (name === "" || underDomain(name, LOCALHOST)) {
    return { ok: false, message: `the host ${hostname} is this machine (localhost)` };
  }
  if (policy.denyDomains.some((domain) => underDomain(name, domain))) {
    return { ok: false, message: `the host ${name} is under a domain deny_domains lists` };
  }
  if (
    policy.allowDomains.length > 0 && !policy.allowDomains.some((d) => underDomain(name, d))
  ) {
    return { ok: false, message: `the host ${name} is not under a domain allow_domains lists` };
  }
  return { ok: true, host: { kind: "name", name } };
}

/**
 * Judges every address a name resolved to: all must pass, so a mixed public and private answer is
 * refused whole (an attacker's name would otherwise be one lucky pick away from the private one).
 */
export function judgeAddresses(
  name: string,
  written: readonly string[],
  policy: FetchPolicy,
): { ok: true; addresses: IpAddress[] } | { ok: false; message: string } {
  if (written.length === 0) return { ok: false, message: `the host ${name} has no address` };
  if (written.length > MAX_RESOLVED_ADDRESSES) {
    return { ok: false, message: `the host ${name} resolves to over ${MAX_RESOLVED_ADDRESSES}` };
  }
  const addresses: IpAddress[] = [];
  for (const text of written) {
    const address = parseAddress(text);
    if (address === null) {
      return { ok: false, message: `the host ${name} resolves to a value that is not an address` };
    }
    const refused = addressProblem(address, policy);
    if (refused !== null) {
      return { ok: false, message: `the host ${name} resolves to ${text}, which ${refused}` };
    }
    addresses.push(address);
  }
  return { ok: true, addresses };
}

/** Why an address may not be fetched from, or null when it may. */
function addressProblem(address: IpAddress, policy: FetchPolicy): string | null {
  if (isGlobalUnicast(address) || inRanges(address, policy.allowPrivate)) return null;
  return `is a ${
    addressRange(address)
  } address, not fetched (allow_private_cidrs opens a private range)`;
}
