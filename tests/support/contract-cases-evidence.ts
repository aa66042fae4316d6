/**
 * The contract's cases of `/v1/fetch` and `/v1/verify` (tests/support/contract-cases.ts): pages of
 * the full gateway's loopback site (`sitePage`) as markdown and text, from the page and from the
 * cache, each refusal of a fetch, and each verdict of verify over a receipt of a real fetch.
 *
 * The site's port is known once the gateways have started, so a case naming a page reads its path
 * or body when it is sent (a getter), never when this table is built.
 */
import type { EnvelopeCode } from "../../src/protocol/codes.ts";
import { bodyRefusals, type ContractCase, holdSlot, readRefusals } from "./contract-case.ts";
import type { FetchAnswer } from "./contract-world.ts";
import { sitePage } from "./contract-site.ts";

/** A loopback URL refused before anything is fetched, where the case never gets that far. */
const NEVER_FETCHED = "http://127.0.0.1:9/never";

const query = (path: string, extra = "") =>
  `/v1/fetch?url=${encodeURIComponent(sitePage(path))}${extra}`;

/** GET /v1/fetch of a page of the site on the full gateway. */
function getPage(
  name: string,
  page: string,
  status: number,
  code: EnvelopeCode,
  more: Partial<ContractCase> & { extra?: string } = {},
): ContractCase {
  const { extra = "", ...rest } = more;
  return {
    name,
    method: "GET",
    get path() {
      return query(page, extra);
    },
    gateway: "full",
    status,
    code,
    ...rest,
  };
}

/** POST /v1/fetch of a page of the site (with more fields) on a gateway, the full by default. */
function postPage(
  name: string,
  page: string,
  status: number,
  code: EnvelopeCode,
  more: Partial<ContractCase> & { fields?: Record<string, unknown> } = {},
): ContractCase {
  const { fields = {}, ...rest } = more;
  return {
    name,
    method: "POST",
    path: "/v1/fetch",
    gateway: "full",
    get json() {
      return { url: sitePage(page), ...fields };
    },
    status,
    code,
    ...rest,
  };
}

/** GET and POST /v1/fetch: the page as evidence, and each way a fetch is refused. */
export const FETCH_CASES: readonly ContractCase[] = [
  postPage("an HTML page as markdown, with its receipt", "/article", 200, "ok", {
    fields: { max_age_seconds: 0 },
    shows: { "result.cached": false, "result.evidence.route": "extracted" },
  }),
  postPage("a page as text, with its body as received", "/notes.md", 200, "ok", {
    fields: { format: "text", include_raw: true, max_age_seconds: 0 },
    shows: { "result.cached": false, "result.evidence.text": "Notes\n\nLow water at noon.\n" },
  }),
  getPage("an HTML page as text (GET form)", "/article", 200, "ok", {
    extra: "&format=text&max_age_seconds=0",
    shows: { "result.cached": false, "result.evidence.title": "Tides" },
  }),
  getPage("a markdown page as markdown (GET form)", "/notes.md", 200, "ok", {
    extra: "&max_chars=1000&timeout_ms=5000&include_raw=false&max_age_seconds=0",
    shows: { "result.cached": false, "result.evidence.route": "markdown_served" },
  }),
  postPage("the passages that answer a query, best first", "/article", 200, "ok", {
    fields: { query: "when is the full moon", max_passages: 1 },
    shows: {
      "result.evidence.passages.length": 1,
      "result.evidence.passages.0.text": "Spring tides come with a new moon and a full moon.",
    },
  }),
  getPage("the passages that answer a query (GET form)", "/article", 200, "ok", {
    extra: "&query=full+moon&max_passages=2",
    shows: {
      "result.evidence.passages.0.text": "Spring tides come with a new moon and a full moon.",
    },
  }),
  postPage("max_passages without a query", "/article", 400, "invalid_field", {
    fields: { max_passages: 2 },
  }),
  getPage("a page from the cache, with its age", "/notes.md", 200, "ok", {
    shows: { "result.cached": true },
    before: (world) => world.cachePage({ url: sitePage("/notes.md") }),
  }),
  postPage("a gateway whose manifest has no fetch block", "/article", 403, "fetch_disabled", {
    gateway: "minimal",
  }),
  getPage(
    "a gateway whose manifest has no fetch block (GET form)",
    "/article",
    403,
    "fetch_disabled",
    {
      gateway: "minimal",
    },
  ),
  postPage("the embedded default's policy: no private address", "/article", 403, "url_forbidden", {
    gateway: "default",
    shows: { "error.field": "url" },
  }),
  {
    name: "an address the fetch policy does not open",
    method: "POST",
    path: "/v1/fetch",
    gateway: "full",
    json: { url: "http://127.0.0.2/page" },
    status: 403,
    code: "url_forbidden",
    shows: { "error.field": "url" },
  },
  {
    name: "not an http(s) URL",
    method: "GET",
    path: `/v1/fetch?url=${encodeURIComponent("file:///etc/hostname")}`,
    gateway: "full",
    status: 403,
    code: "url_forbidden",
  },
  postPage("a page robots.txt disallows", "/private", 403, "robots_disallowed"),
  getPage("a page robots.txt disallows (GET form)", "/private", 403, "robots_disallowed"),
  postPage("a redirect that never ends", "/loop", 422, "too_many_redirects"),
  getPage("a page that is not text", "/png", 422, "unsupported_content_type"),
  postPage("a page that is not text (POST)", "/png", 422, "unsupported_content_type"),
  postPage("a page answering 500: retry", "/fails", 502, "fetch_failed", {
    shows: { action: "retry" },
  }),
  getPage("a server that closes the connection: retry", "/closes", 502, "fetch_failed", {
    shows: { action: "retry" },
  }),
  postPage("a page that is not there (404): report", "/gone", 502, "fetch_failed", {
    shows: { action: "report" },
  }),
  {
    name: "every slot held",
    method: "POST",
    path: "/v1/fetch",
    gateway: "full",
    json: { url: NEVER_FETCHED },
    status: 429,
    code: "overloaded",
    before: holdSlot,
  },
  {
    name: "every slot held (GET form)",
    method: "GET",
    path: `/v1/fetch?url=${encodeURIComponent(NEVER_FETCHED)}`,
    gateway: "full",
    status: 429,
    code: "overloaded",
    before: holdSlot,
  },
  ...[
    [{ timeout_ms: 60_001 }, "timeout_out_of_range"],
    [{ max_chars: 200_001 }, "invalid_field"],
    [{ format: "html" }, "invalid_field"],
  ].map(([fields, code]): ContractCase => ({
    name: code as string,
    method: "POST",
    path: "/v1/fetch",
    gateway: "full",
    json: { url: NEVER_FETCHED, ...fields as object },
    status: 400,
    code: code as EnvelopeCode,
    outside: true,
  })),
  {
    name: "a field given twice",
    method: "POST",
    path: "/v1/fetch",
    gateway: "full",
    headers: { "content-type": "application/json" },
    body: `{"url":"${NEVER_FETCHED}","url":"${NEVER_FETCHED}"}`,
    // Prism would send the JSON it read, one "url".
    raw: "send",
    status: 400,
    code: "invalid_field",
  },
  ...[
    ["&timeout_ms=60001", "timeout_out_of_range"],
    ["&url=a", "invalid_field"],
    ["&depth=2", "unknown_field"],
  ].map(([extra, code]): ContractCase => ({
    name: `${code} (GET form)`,
    method: "GET",
    path: `/v1/fetch?url=${encodeURIComponent(NEVER_FETCHED)}${extra}`,
    gateway: "full",
    status: 400,
    code: code as EnvelopeCode,
    outside: true,
  })),
  {
    name: "a parameter that is not UTF-8 once decoded",
    method: "GET",
    path: "/v1/fetch?url=%FF",
    raw: "send",
    gateway: "full",
    status: 400,
    code: "invalid_utf8",
  },
  ...readRefusals(`/v1/fetch?url=${encodeURIComponent(NEVER_FETCHED)}`),
  ...bodyRefusals("/v1/fetch", { url: NEVER_FETCHED }, "full"),
  { name: "a method it does not allow", method: "PUT", path: "/v1/fetch", status: 405 },
];

/** The article as the full gateway fetched it, for verify's cases; fetched by the first. */
let fetched: FetchAnswer | null = null;

const pageOf = (answer: FetchAnswer | null) => {
  if (answer === null || answer.receipt === null) throw new Error("no receipt was fetched");
  return { receipt: answer.receipt, markdown: answer.evidence.markdown };
};

/** Its receipt with one claim changed, its signature kept. */
function forged(receipt: string): string {
  const [head, payload, signature] = receipt.split(".") as [string, string, string];
  const claims = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/")));
  const changed = btoa(JSON.stringify({ ...claims, status_code: 203 }))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `${head}.${changed}.${signature}`;
}

/** POST /v1/verify of the fetched article with `ask` made from its receipt and markdown. */
function verdict(
  name: string,
  want: string,
  ask: (page: { receipt: string; markdown: string }) => Record<string, unknown>,
  more: Partial<ContractCase> = {},
): ContractCase {
  return {
    name,
    method: "POST",
    path: "/v1/verify",
    gateway: "full",
    get json() {
      return ask(pageOf(fetched));
    },
    status: 200,
    code: "ok",
    shows: { "result.verdict": want },
    ...more,
  };
}

/** POST /v1/verify: each verdict, and each way the request is refused. */
export const VERIFY_CASES: readonly ContractCase[] = [
  verdict("a quote from the page, under its receipt", "verified", (page) => ({
    ...page,
    quote: "SPRING tides come with a new moon",
  }), {
    before: async (world) => {
      fetched = await world.fetchPage({ url: sitePage("/article"), max_age_seconds: 0 });
    },
  }),
  verdict("a quote the page does not hold", "quote_not_found", (page) => ({
    ...page,
    quote: "low water at noon",
  })),
  verdict("text the receipt does not cover", "content_mismatch", (page) => ({
    ...page,
    markdown: page.markdown.replace("moon", "mo0n"),
  })),
  verdict("a receipt with one claim changed", "signature_invalid", (page) => ({
    ...page,
    receipt: forged(page.receipt),
  })),
  {
    name: "no receipt",
    method: "POST",
    path: "/v1/verify",
    gateway: "full",
    json: { markdown: "# Notes\n\nLow water at noon.\n", quote: "low water" },
    status: 200,
    code: "ok",
    shows: { "result.verdict": "unsigned" },
  },
  {
    name: "a gateway without a signing key",
    method: "POST",
    path: "/v1/verify",
    gateway: "minimal",
    json: { receipt: "a.b.c", markdown: "text" },
    status: 200,
    code: "ok",
    shows: { "result.verdict": "unsigned" },
  },
  {
    name: "markdown missing",
    method: "POST",
    path: "/v1/verify",
    gateway: "full",
    json: { quote: "x" },
    status: 400,
    code: "invalid_field",
    outside: true,
  },
  ...bodyRefusals("/v1/verify", { markdown: "text" }, "full"),
  { name: "a method it does not allow", method: "GET", path: "/v1/verify", status: 405 },
];
