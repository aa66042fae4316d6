/**
 * Evidence: fetches one page a caller names and turns it into evidence: the final URL, the hashes
 * of the body and of the text, the main content as markdown or text, its anchors and links.
 *
 * Boundary: every URL, redirect, DNS answer and byte here is hostile. The runtime hands in the
 * resolver and a connector that sends one request to one checked address; nothing here opens a
 * socket, resolves a name by itself, or knows about routes, envelopes or the answer cache.
 *
 * Invariants:
 * - Only `http:` and `https:` URLs without credentials are fetched; `localhost` and names under it
 *   are refused without resolving.
 * - Every address a host resolves to must be global unicast (ip-rules.ts) or inside the policy's
 *   `allowPrivate`; one refused address refuses the host. TRACEFETCH_ALLOW_LOOPBACK plays no part.
 * - The connection goes to an address that was checked: the name is never resolved a second time.
 * - Redirects are followed by hand, each Location judged from scratch, at most MAX_FETCH_REDIRECTS,
 *   and a loop is refused.
 * - robots.txt is asked through the same path before the page; a page it disallows is never asked.
 * - No byte past MAX_FETCH_BODY_BYTES is read, and the whole fetch ends at its timeout, a body that
 *   never ends included.
 * - The extractor sits behind one function (extractPage) and is loaded on demand.
 *
 * Wiring (for a route): load this module with a dynamic import (with ipaddr.js, lru-cache and
 * robots-parser it is about 15 KiB gzipped, too much for the worker's main module); read the policy
 * once, `fetchPolicyOf(manifest.fetch)`, and keep one `createRobotsCache()` per instance; take the
 * resolver and connector from the runtime root, `nodeFetchParts({ dnsServers })`
 * (src/runtime/node-evidence.ts, Node and Deno) or `workerFetchParts({ dohUrl })`
 * (src/runtime/worker-evidence.ts); then per request `fetchEvidence(request, policy, { ...parts,
 * now, signal, robots, userAgent: fetchUserAgent(version) })`. A `refused` outcome's `code` is the
 * envelope's; `failed` is `fetch_failed`, with `codeRow("fetch_failed", outcome.retryable)`.
 */
export * from "./fetch-types.ts";
export * from "./fetch-policy.ts";
export { fetchEvidence } from "./fetch-evidence.ts";
export * from "./fetch-user-agent.ts";
export * from "./robots-cache.ts";
export * from "./extract-page.ts";
export { FETCH_ACCEPT } from "./fetch-evidence.ts";
