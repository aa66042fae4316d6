/**
 * The manifest's `fetch` block read into the policy a fetch is judged by: ranges parsed once,
 * domains as written (validateManifest checked both).
 */
import type { FetchBlock } from "../protocol/manifest-schema.ts";
import { type CidrRange, parseCidr } from "../io/ip-rules.ts";
import type { FetchPolicy } from "./fetch-types.ts";

/** The policy of a manifest's fetch block; null (fetching off) when the manifest has none. */
export function fetchPolicyOf(block: FetchBlock | undefined): FetchPolicy | null {
  if (block === undefined) return null;
  const allowPrivate = block.allow_private_cidrs.map((text) => {
    const range = parseCidr(text);
    // validateManifest refused every range parseCidr cannot read; one here is a bug.
    if (range === null) throw new Error(`fetch.allow_private_cidrs: ${text} was not validated`);
    return range;
  });
  return {
    allowPrivate: allowPrivate as readonly CidrRange[],
    denyDomains: block.deny_domains,
    allowDomains: block.allow_domains,
  };
}

/** Whether `host` is `domain` or a name under it (`a.example.com` is under `example.com`). */
export function underDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}
