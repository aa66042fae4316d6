/**
 * `POST /v1/crawl` (docs/envelope.md, "Crawling a site"): a bounded crawl of one origin, streamed
 * as NDJSON (SSE for `Accept: text/event-stream`): a `page` event per page fetched, `skipped`
 * events, then `done`. Each page is a fetch of `POST /v1/fetch` (fetch-route.ts: the same policy,
 * robots.txt, cache, receipt and passages), admitted one by one as a fetch is; src/evidence's
 * crawlSite decides which URL comes next and when. Loaded with the first crawl.
 *
 * Invariants:
 * - The request is read and validated, the start URL judged and the first page admitted before the
 *   stream starts: those refusals are ordinary envelopes.
 * - A caller that goes away aborts the crawl: the page fetches in flight are cancelled, and no
 *   page is started after.
 * - Each page takes an in-flight slot and counts against its caller's limits, and gives the slot
 *   back however its fetch ends.
 * - An instance's crawls have at most MAX_CRAWL_IN_FLIGHT requests in flight to one origin, all
 *   crawls together (origin-gates.ts).
 */
import type { Context } from "hono";
import type { CrawlAsk } from "../protocol/crawl-request.ts";
import { MAX_CRAWL_DURATION_MS } from "../protocol/crawl-limits.ts";
import { DEFAULT_FETCH_CHARS, DEFAULT_FETCH_TIMEOUT_MS } from "../protocol/fetch-limits.ts";
import type { FetchAsk } from "../protocol/fetch-request.ts";
import type { FetchResult } from "../protocol/evidence-schema.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import type { GatewayState } from "../gateway/gateway-state.ts";
import type { CallerAsk } from "../gateway/caller-limits.ts";
import type { FetchAdmission } from "../gateway/page-fetching.ts";
import { VERSION } from "../protocol/version.ts";
import { fetchUserAgent } from "../evidence/fetch-user-agent.ts";
import { judgeUrl } from "../evidence/judge-url.ts";
import { robotsVerdict } from "../evidence/robots-check.ts";
import { crawlSite, type PageVisit } from "../evidence/crawl-site.ts";
import { OriginGates } from "../evidence/origin-gates.ts";
import type { Release } from "../io/gate.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { type EvidencePorts, fetchAdmitted, fetchReady } from "./fetch-route.ts";
import { eventStream, type StreamFormat } from "./search-stream.ts";
import { envelopeResponse } from "./respond.ts";

export { parseCrawlRequestText } from "../protocol/crawl-request.ts";

export type CrawlCall = CallerAsk & {
  request: CrawlAsk;
  format: StreamFormat;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
  later: (work: () => Promise<void>) => void;
};

/** Each instance's places per origin, shared by its crawls: two crawls of one site share two. */
const gates = new WeakMap<GatewayState, OriginGates>();

/** Answers a crawl: a refusal as an envelope, or the stream of its events. */
export async function answerCrawl(
  c: Context<GatewayEnv>,
  state: GatewayState,
  ports: EvidencePorts | null,
  call: CrawlCall,
): Promise<Response> {
  const { request, requestId } = call;
  const ready = fetchReady(state, ports, "crawl", requestId);
  if (!ready.ok) return envelopeResponse(ready.envelope);
  const { policy, robots } = ready;
  const judged = judgeUrl(request.url, policy);
  if (!judged.ok) {
    return envelopeResponse(
      problemEnvelope("crawl", "url_forbidden", requestId, judged.message, "url"),
    );
  }
  const fetching = await state.pageFetching();
  const first = await fetching.admit(call);
  if (!first.ok) return envelopeResponse({ ...first.envelope, command: "crawl" });
  let firstAdmission: FetchAdmission | null = first;
  const userAgent = fetchUserAgent(VERSION);
  const places = gatesOf(state);

  return eventStream(c, call.format, requestId, state.config.heartbeatMs, async (send, left) => {
    const signal = AbortSignal.any([left, AbortSignal.timeout(MAX_CRAWL_DURATION_MS)]);
    const visit = async (url: string, pageSignal: AbortSignal): Promise<PageVisit> => {
      // Another crawl of the origin may hold its places: wait for one before taking a slot.
      let place: Release;
      try {
        place = await places.acquire(new URL(url).origin, pageSignal);
      } catch {
        return { kind: "failed", code: "fetch_failed", message: "the crawl was stopped" };
      }
      try {
        return await visitWithPlace(url, pageSignal);
      } finally {
        place();
      }
    };
    const visitWithPlace = async (url: string, pageSignal: AbortSignal): Promise<PageVisit> => {
      let admission = firstAdmission;
      firstAdmission = null;
      if (admission === null) {
        admission = await fetching.admit(call);
        if (!admission.ok) {
          const { code, error } = admission.envelope;
          return { kind: "refused", code, message: error?.message ?? code };
        }
      }
      if (!admission.ok) throw new Error("a refused admission reached a page's fetch");
      try {
        const envelope = await fetchAdmitted(state, ready.ports, {
          ...call,
          request: pageRequest(request, url),
          signal: pageSignal,
        });
        if (envelope.ok) return { kind: "page", result: envelope.result as FetchResult };
        return {
          kind: "failed",
          code: envelope.code,
          message: envelope.error?.message ?? envelope.code,
        };
      } finally {
        admission.release();
      }
    };
    try {
      const end = await crawlSite(
        { url: judged.url, maxPages: request.max_pages, maxDepth: request.max_depth },
        {
          robots: (url, robotsSignal) =>
            robotsVerdict(url, policy, {
              resolve: ready.ports.resolve,
              connector: ready.ports.connector,
              now: state.config.wallClock,
              signal: robotsSignal,
              robots,
              userAgent,
            }, robotsSignal),
          visit,
          page: (url, depth, result) =>
            send({ event: "page", request_id: requestId, url, depth, result }),
          skipped: (skip) => send({ event: "skipped", request_id: requestId, ...skip }),
          sleep,
          now: state.config.now,
        },
        signal,
      );
      state.config.telemetry.metrics?.crawled(left.aborted ? "cancelled" : end.ended, end.pages);
      if (left.aborted) return;
      send({ event: "done", request_id: requestId, ...end });
    } finally {
      // Never started: the crawl ended before its first page (the caller left at once).
      if (firstAdmission?.ok) firstAdmission.release();
    }
  });
}

function gatesOf(state: GatewayState): OriginGates {
  let kept = gates.get(state);
  if (kept === undefined) {
    kept = new OriginGates();
    gates.set(state, kept);
  }
  return kept;
}

/** A page of the crawl as a fetch request: a fetch's defaults, the crawl's query. */
function pageRequest(crawl: CrawlAsk, url: string): FetchAsk {
  return {
    url,
    format: "markdown",
    max_chars: DEFAULT_FETCH_CHARS,
    timeout_ms: DEFAULT_FETCH_TIMEOUT_MS,
    include_raw: false,
    ...(crawl.query === undefined ? {} : { query: crawl.query }),
    max_passages: crawl.max_passages,
  };
}

/** Waits `ms`, or resolves as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
