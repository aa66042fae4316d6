/**
 * The contract's cases of `POST /v1/crawl` (tests/support/contract-cases.ts): a crawl of the full
 * gateway's loopback site (`sitePage`) streamed as NDJSON and as SSE, each event checked against
 * the document's CrawlEvent, and each refusal before the stream.
 */
import { bodyRefusals, type ContractCase } from "./contract-case.ts";
import { sitePage } from "./contract-site.ts";

/** A loopback URL refused before anything is fetched, where the case never gets that far. */
const NEVER_FETCHED = "http://127.0.0.1:9/never";

/** POST /v1/crawl on the full gateway from a page of the site. */
function crawlFrom(
  name: string,
  page: string,
  fields: Record<string, unknown>,
  more: Partial<ContractCase> & Pick<ContractCase, "status">,
): ContractCase {
  return {
    name,
    method: "POST",
    path: "/v1/crawl",
    gateway: "full",
    get json() {
      return { url: sitePage(page), ...fields };
    },
    ...more,
  };
}

export const CRAWL_CASES: readonly ContractCase[] = [
  crawlFrom("the article and the page it links to, streamed as NDJSON", "/article", {
    max_pages: 2,
    query: "full moon",
  }, { status: 200, type: "application/x-ndjson" }),
  crawlFrom("the first page alone, streamed as SSE", "/notes.md", { max_depth: 0 }, {
    status: 200,
    headers: { accept: "text/event-stream" },
    type: "text/event-stream",
  }),
  crawlFrom("max_pages past 50", "/article", { max_pages: 51 }, {
    status: 400,
    code: "invalid_field",
    outside: true,
  }),
  crawlFrom("a field a crawl does not have", "/article", { depth: 2 }, {
    status: 400,
    code: "unknown_field",
    outside: true,
  }),
  crawlFrom("a gateway whose manifest has no fetch block", "/article", {}, {
    gateway: "minimal",
    status: 403,
    code: "fetch_disabled",
  }),
  crawlFrom("the embedded default's policy: no private address", "/article", {}, {
    gateway: "default",
    status: 403,
    code: "url_forbidden",
  }),
  ...bodyRefusals("/v1/crawl", { url: NEVER_FETCHED }, "full"),
  { name: "a method it does not allow", method: "GET", path: "/v1/crawl", status: 405 },
];
