/**
 * One fetch, start to end: judge the URL, check robots.txt, follow redirects one judged hop at a
 * time, read the body under its caps, and make the evidence.
 */
import { readPrefix } from "../io/bounded-reader.ts";
import { MAX_FETCH_BODY_BYTES } from "../protocol/fetch-limits.ts";
import { decodeBody } from "./decode-body.ts";
import { sha256OfBytes, sha256OfText } from "./digest.ts";
import { extractPage, type PageKind } from "./extract-page.ts";
import type {
  Evidence,
  FetchDeps,
  FetchOutcome,
  FetchPolicy,
  FetchRefusal,
  FetchRequest,
} from "./fetch-types.ts";
import { followRedirects } from "./follow-redirects.ts";
import { judgeUrl } from "./judge-url.ts";
import { robotsVerdict } from "./robots-check.ts";
import { abortFailure, failure } from "./send-judged.ts";

/** Markdown first (sites that serve it to agents), then HTML; plain text last. */
export const FETCH_ACCEPT =
  "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8";

/** The content types a fetch reads, by their essence (RFC 9110 section 8.3.1). */
const KINDS: Readonly<Record<string, PageKind>> = {
  "text/html": "html",
  "application/xhtml+xml": "html",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/plain": "text",
};

/** Statuses a later fetch may not see: a server failing, overloaded or slow. */
const RETRYABLE_STATUSES = new Set([408, 425, 429]);

/**
 * Fetches one page under the policy (null: fetching is off, `fetch_disabled`). Never throws for
 * anything a page, a resolver or a network does; every such case is an outcome.
 */
export async function fetchEvidence(
  request: FetchRequest,
  policy: FetchPolicy | null,
  deps: FetchDeps,
): Promise<FetchOutcome> {
  if (policy === null) {
    return refused(
      "fetch_disabled",
      "this gateway does not fetch pages (its manifest has no fetch block)",
    );
  }
  const judged = judgeUrl(request.url, policy);
  if (!judged.ok) return refused("url_forbidden", judged.message);
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(request.timeout_ms)]);
  let robots = { allowed: true, unavailable: false };
  const headers = { "user-agent": deps.userAgent, accept: FETCH_ACCEPT };
  const followed = await followRedirects(judged, policy, deps, signal, headers, async (url) => {
    const verdict = await robotsVerdict(url, policy, deps, signal);
    if (!verdict.ok) return verdict.outcome;
    robots = { allowed: verdict.allowed, unavailable: verdict.unavailable };
    return verdict.allowed ? null : {
      outcome: "refused",
      code: "robots_disallowed",
      message: verdict.unavailable
        ? `robots.txt of ${url.origin} answered a server error, which disallows every page until it is read (RFC 9309)`
        : `robots.txt of ${url.origin} disallows ${url.pathname} for ${deps.userAgent}`,
    };
  });
  if (!followed.ok) return followed.outcome;
  const { url, response } = followed;
  const fetchedAt = new Date(deps.now()).toISOString();
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel("not read").catch(() => {});
    const retryable = response.status >= 500 || RETRYABLE_STATUSES.has(response.status);
    return failure(
      retryable,
      "http_status",
      `the page answered ${response.status}`,
      response.status,
    );
  }
  const contentType = response.headers.get("content-type") ?? "";
  const essence = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  const kind = KINDS[essence];
  if (kind === undefined) {
    await response.body?.cancel("not read").catch(() => {});
    return refused(
      "unsupported_content_type",
      `the page is ${
        essence || "of no content type"
      }; HTML, XHTML, plain text and markdown are read`,
    );
  }
  let read;
  try {
    read = await readPrefix(response.body, MAX_FETCH_BODY_BYTES, signal);
  } catch {
    if (signal.aborted) return abortFailure(signal);
    return failure(true, "failed", "the connection was lost while the page was read");
  }
  if (!read.ok) return abortFailure(signal);
  const page = await extractPage({
    body: decodeBody(read.bytes, contentType, kind === "html").text,
    kind,
    url,
    format: request.format,
    maxChars: request.max_chars,
  });
  const evidence: Evidence = {
    requested_url: judged.url.href,
    final_url: url.href,
    status_code: response.status,
    fetched_at: fetchedAt,
    content_type: contentType,
    bytes: read.bytes.byteLength,
    source_sha256: await sha256OfBytes(read.bytes),
    title: page.title,
    ...(request.format === "text" ? { text: page.content } : { markdown: page.content }),
    truncated: read.truncated || page.truncated,
    markdown_sha256: await sha256OfText(page.content),
    anchors: page.anchors,
    links: page.links,
    robots,
    route: page.route,
  };
  return { outcome: "fetched", evidence, body: read.bytes };
}

function refused(code: FetchRefusal["code"], message: string): FetchRefusal {
  return { outcome: "refused", code, message };
}
