/**
 * A page fetch as the operator's metrics and traces see it (docs/deploy.md, "Observing it"): the
 * fetch's client span, named `fetch page`, carries the page's host (`server.address`) and never
 * its path or query, which can say what a caller reads (docs/security.md keeps the same line for
 * mining traces); the metrics count the outcome and code, never the host.
 */
import type { ClientSpan, FetchSeen, RequestTrace } from "../core/telemetry.ts";
import type { FetchOutcome } from "../evidence/mod.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { FetchResult } from "../protocol/evidence-schema.ts";

/** The client span of one page fetch (redirects included), or null when the request is not traced. */
export function fetchSpan(trace: RequestTrace | undefined, url: string): ClientSpan | null {
  if (trace === undefined) return null;
  return trace.client("fetch page", {
    "http.request.method": "GET",
    "server.address": new URL(url).hostname,
  });
}

/** Ends the fetch's span with its outcome: an error status unless the page was read. */
export function endFetchSpan(span: ClientSpan, fetched: FetchOutcome): void {
  switch (fetched.outcome) {
    case "fetched":
      span.responded(fetched.evidence.status_code);
      span.end({ attributes: { "tracefetch.outcome": "fetched", "tracefetch.code": "ok" } });
      return;
    case "refused":
      span.end({
        attributes: { "tracefetch.outcome": "refused", "tracefetch.code": fetched.code },
        error: fetched.code,
      });
      return;
    case "failed":
      if (fetched.status_code !== null) span.responded(fetched.status_code);
      span.end({
        attributes: { "tracefetch.outcome": "failed", "tracefetch.code": fetched.code },
        error: fetched.reason,
      });
      return;
    default: {
      const never: never = fetched;
      throw new Error(`unhandled fetch outcome ${JSON.stringify(never)}`);
    }
  }
}

/** The metrics' view of a fetch's answer: where it came from, its code, the bytes read. */
export function fetchSeen(
  envelope: Envelope,
  page: Partial<FetchResult>,
  seconds: number,
): FetchSeen {
  const { evidence, cached = false } = page;
  if (cached) return { outcome: "cached", code: envelope.code, seconds, bytes: 0 };
  if (evidence !== undefined) {
    return { outcome: "fetched", code: envelope.code, seconds, bytes: evidence.bytes };
  }
  const outcome = envelope.code === "fetch_failed" ? "failed" : "refused";
  return { outcome, code: envelope.code, seconds, bytes: 0 };
}
