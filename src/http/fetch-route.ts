/**
 * `POST /v1/fetch`, `GET /v1/fetch?url=...` and `POST /v1/verify` (docs/envelope.md, "Fetching a
 * page"): the HTTP side of evidence. A fetch is admitted as a search is (caller limits, an
 * in-flight slot), looked up in the answer cache, fetched by src/evidence under the manifest's
 * policy, signed into a receipt when the gateway holds a key, and kept in the cache; the passages
 * for a query are made from the text at answer time, never cached with it. Loaded with
 * the first fetch or verify: on Workers a module of its own that searches never load.
 *
 * Invariants:
 * - Nothing is fetched before the request was read and validated in full and the fetch admitted.
 * - The slot a fetch holds is given back however the fetch ends.
 * - A receipt is signed only over evidence this gateway fetched itself; a cached answer keeps the
 *   receipt of the fetch that made it, whose `fetched_at` says when that was.
 */
import * as v from "valibot";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { FetchAsk, VerifyAsk } from "../protocol/fetch-request.ts";
import {
  type Anchor,
  evidenceText,
  type FetchResult,
  FetchResultSchema,
} from "../protocol/evidence-schema.ts";
import { buildEnvelope, problemEnvelope } from "../envelope/build-envelope.ts";
import { signReceipt } from "../auth/fetch-receipt.ts";
import type { GatewayState } from "../gateway/gateway-state.ts";
import type { CallerAsk } from "../gateway/caller-limits.ts";
import { VERSION } from "../protocol/version.ts";
import {
  type Connector,
  createRobotsCache,
  type Evidence,
  fetchEvidence,
  type FetchPolicy,
  fetchPolicyOf,
  fetchUserAgent,
  type Resolver,
  type RobotsCache,
} from "../evidence/mod.ts";
import { anchorsOf, headingsOf } from "../evidence/page-anchors.ts";
import { passagesOf } from "../evidence/page-passages.ts";
import { verifyEvidence } from "../evidence/verify-evidence.ts";
import type { RequestTrace } from "../core/telemetry.ts";
import { endFetchSpan, fetchSeen, fetchSpan } from "./fetch-telemetry.ts";

// The readers of the routes' requests load with this module, not with every search.
export { parseFetchRequestText, parseVerifyRequestText } from "../protocol/fetch-request.ts";
export { fetchRequestFromQuery } from "./fetch-input.ts";

/** How this runtime reaches pages: a resolver and a connector to one checked address. */
export type EvidencePorts = { resolve: Resolver; connector: Connector };

export type FetchCall = CallerAsk & {
  request: FetchAsk;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
  /** Work after the answer (the cache's write). */
  later: (work: () => Promise<void>) => void;
  /** The request's trace: the page fetch is a client span of it. */
  trace?: RequestTrace | undefined;
};

/** The warning of an answer without a receipt. */
export const UNSIGNED_WARNING =
  "no receipt: this gateway has no signing key (TRACEFETCH_SIGNING_JWK), so nobody can check that this text came from this page";

/**
 * What one gateway instance keeps for its fetches, made with its first: the manifest's policy, read
 * once, and its robots.txt answers (the state object outlives requests).
 */
const instances = new WeakMap<
  GatewayState,
  { policy: ReturnType<typeof fetchPolicyOf>; robots: RobotsCache }
>();

function instanceOf(state: GatewayState) {
  let kept = instances.get(state);
  if (kept === undefined) {
    kept = { policy: fetchPolicyOf(state.config.manifest.fetch), robots: createRobotsCache() };
    instances.set(state, kept);
  }
  return kept;
}

/** What a fetch needs, or the answer of a gateway that cannot fetch (no fetch block, no way out). */
export function fetchReady(
  state: GatewayState,
  ports: EvidencePorts | null,
  command: "fetch" | "crawl",
  requestId: string,
):
  | { ok: true; ports: EvidencePorts; policy: FetchPolicy; robots: RobotsCache }
  | { ok: false; envelope: Envelope } {
  const { policy, robots } = instanceOf(state);
  if (policy !== null && ports !== null) return { ok: true, ports, policy, robots };
  return {
    ok: false,
    envelope: problemEnvelope(
      command,
      "fetch_disabled",
      requestId,
      policy === null
        ? "this gateway does not fetch pages: its manifest has no fetch block (docs/security.md)"
        : "this gateway's runtime gave it no way to reach pages",
    ),
  };
}

export async function answerFetch(
  state: GatewayState,
  ports: EvidencePorts | null,
  call: FetchCall,
): Promise<Envelope> {
  const ready = fetchReady(state, ports, "fetch", call.requestId);
  if (!ready.ok) return ready.envelope;
  const admission = await (await state.pageFetching()).admit(call);
  if (!admission.ok) return admission.envelope;
  try {
    return await fetchAdmitted(state, ready.ports, call);
  } finally {
    admission.release();
  }
}

/**
 * One admitted fetch: from the answer cache, or fetched under the manifest's policy. The caller
 * holds its admission (a slot, its count against the caller's limits) until this settles.
 */
export async function fetchAdmitted(
  state: GatewayState,
  ports: EvidencePorts,
  call: FetchCall,
): Promise<Envelope> {
  const { request, requestId } = call;
  const ready = fetchReady(state, ports, "fetch", requestId);
  if (!ready.ok) return ready.envelope;
  const { policy, robots } = ready;
  const fetching = await state.pageFetching();
  const started = state.config.now();
  const metrics = state.config.telemetry.metrics;
  /** The answer, counted, and its trace recorded after it when mining is on (docs/security.md). */
  const traced = (envelope: Envelope, page: Partial<FetchResult> = {}): Envelope => {
    metrics?.fetched(fetchSeen(envelope, page, (state.config.now() - started) / 1000));
    const mining = state.mining;
    if (mining === null) return envelope;
    const { evidence, cached = false } = page;
    const latencyMs = state.config.now() - started;
    call.later(() =>
      mining.record({
        kind: "fetch",
        url: evidence?.final_url ?? request.url,
        format: request.format,
        code: envelope.code,
        ...(evidence === undefined
          ? {}
          : { statusCode: evidence.status_code, bytes: evidence.bytes }),
        cached,
        latencyMs,
        caller: call.caller,
        requestId,
        answeredAt: state.config.wallClock(),
      })
    );
    return envelope;
  };
  const hit = await fetching.pages.lookup(request);
  const cached = hit === null ? null : storedResult(hit.text);
  if (hit !== null && cached !== null) {
    const result = withPassages(
      { ...cached, cached: true, age_ms: Math.max(0, Math.round(hit.ageMs)) },
      request,
    );
    return traced(buildEnvelope("fetch", "ok", requestId, { result }), result);
  }
  const span = fetchSpan(call.trace, request.url);
  const outcome = await fetchEvidence(request, policy, {
    resolve: ports.resolve,
    connector: ports.connector,
    now: state.config.wallClock,
    signal: call.signal,
    robots,
    userAgent: fetchUserAgent(VERSION),
  });
  if (span !== null) endFetchSpan(span, outcome);
  switch (outcome.outcome) {
    case "fetched": {
      const made = await resultOf(state, request, outcome.evidence, outcome.body);
      // Kept without passages: a later fetch of the page may ask another query.
      const text = JSON.stringify(made);
      call.later(() => fetching.pages.store(request, outcome.evidence.final_url, text));
      const result = withPassages(made, request);
      return traced(buildEnvelope("fetch", "ok", requestId, { result }), result);
    }
    case "refused":
      return traced(
        problemEnvelope("fetch", outcome.code, requestId, outcome.message, "url"),
      );
    case "failed":
      return traced(
        problemEnvelope("fetch", "fetch_failed", requestId, outcome.message, undefined, {
          anyRetryable: outcome.retryable,
        }),
      );
    default: {
      const never: never = outcome;
      throw new Error(`unhandled fetch outcome ${JSON.stringify(never)}`);
    }
  }
}

/** The answer of a fresh fetch: the evidence, its receipt (or the warning), the raw body if asked. */
async function resultOf(
  state: GatewayState,
  request: FetchAsk,
  evidence: Evidence,
  raw: Uint8Array,
): Promise<FetchResult> {
  const { signer, gatewayIssuer } = state.config.auth;
  const warnings: string[] = [];
  let receipt: string | null = null;
  if (signer !== null && gatewayIssuer !== null) {
    receipt = await signReceipt(signer, gatewayIssuer, {
      requested_url: evidence.requested_url,
      final_url: evidence.final_url,
      status_code: evidence.status_code,
      fetched_at: evidence.fetched_at,
      content_type: evidence.content_type,
      source_sha256: evidence.source_sha256,
      markdown_sha256: evidence.markdown_sha256,
      format: request.format,
    }, state.config.wallClock());
  } else {
    warnings.push(UNSIGNED_WARNING);
  }
  const result: FetchResult = { evidence, receipt, cached: false, warnings };
  if (request.include_raw) result.raw_base64 = base64Of(raw);
  return result;
}

/** The result with the passages of its text for the request's query, when it has one. */
function withPassages(result: FetchResult, request: FetchAsk): FetchResult {
  if (request.query === undefined) return result;
  const { evidence } = result;
  const passages = passagesOf(evidenceText(evidence), request.query, request.max_passages);
  return { ...result, evidence: { ...evidence, passages } };
}

function base64Of(bytes: Uint8Array): string {
  let binary = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/** A cached answer, if it still reads as one; anything else is a miss. */
function storedResult(text: string): FetchResult | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = v.safeParse(FetchResultSchema, value);
  return parsed.success ? parsed.output : null;
}

/** `POST /v1/verify`: the verdict is an answer, `ok: true`, whatever it says. */
export async function answerVerify(
  state: GatewayState,
  request: VerifyAsk,
  requestId: string,
): Promise<Envelope> {
  const { signer, gatewayIssuer } = state.config.auth;
  const keys = signer === null ? null : { jwks: signer.publicJwks, issuer: gatewayIssuer };
  const result = await verifyEvidence(request, keys, headingAnchors);
  state.config.telemetry.metrics?.verified(result.verdict);
  return buildEnvelope("verify", "ok", requestId, { result });
}

/** The anchors of a text handed to verify, as the fetch core makes them for a page's text. */
function headingAnchors(markdown: string): Promise<readonly Anchor[]> {
  const lines = markdown.split("\n");
  return anchorsOf(lines, headingsOf(lines));
}
