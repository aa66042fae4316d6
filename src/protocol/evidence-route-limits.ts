/**
 * The bounds of the evidence routes' requests and answers (`POST /v1/fetch`, `POST /v1/verify`,
 * docs/envelope.md, "Fetching a page"), each with the reason for its value. The bounds of the
 * fetch itself (characters, body bytes, redirects, its timeout) are fetch-limits.ts's.
 */
import { MAX_FETCH_CHARS } from "./fetch-limits.ts";

/** `max_chars`: the returned markdown or text, in code points (at most MAX_FETCH_CHARS). */
export const MIN_FETCH_CHARS = 1;

/** `timeout_ms` of a fetch, at least: the bounds above it are fetch-limits.ts's. */
export const MIN_FETCH_TIMEOUT_MS = 1;
/**
 * A receipt handed to `POST /v1/verify`, in characters: a signed receipt is a few hundred bytes
 * plus its two URLs (each at most MAX_FETCH_URL_CHARS); anything longer is not one of ours.
 */
export const MAX_RECEIPT_CHARS = 24_000;

/**
 * Passages a fetch with a `query` answers at most (`max_passages`): the few paragraphs an agent
 * reads instead of the page; past ten it is reading the page again.
 */
export const MAX_PASSAGES = 10;

/** Passages answered when the request names no `max_passages`: the paragraph that answers and two that may. */
export const DEFAULT_PASSAGES = 3;

/** A quote to look for: a passage an agent cites, not a page. */
export const MAX_QUOTE_CHARS = 4_000;

/**
 * The markdown a verify checks, in code points: the largest a fetch returns (MAX_FETCH_CHARS);
 * the request body cap (1 MiB) also bounds it in bytes.
 */
export const MAX_VERIFY_MARKDOWN_CHARS = MAX_FETCH_CHARS;

/**
 * The markdown an MCP `fetch` tool call shows as text: about a thousand words a model reads at
 * once; the whole of it is in `structuredContent`, and a line says where the text was cut.
 */
export const MAX_MCP_FETCH_TEXT_CHARS = 4_000;

/**
 * How long a fetched page stays in the answer cache, unless the manifest's `fetch` block says
 * otherwise: pages change, and a caller that wants it fresh says `max_age_seconds: 0`.
 */
export const DEFAULT_FETCH_CACHE_TTL_SECONDS = 600;

/** The JWS `typ` of a fetch receipt: never taken for a provider token (`JWT`) or a trace batch. */
export const RECEIPT_TYP = "tracefetch-receipt+jwt";

/**
 * `tracefetch fetch` waits for the gateway this long: a fetch's longest timeout
 * (MAX_FETCH_TIMEOUT_MS, a minute) and five seconds for the gateway around it.
 */
export const GATEWAY_FETCH_TIMEOUT_MS = 65_000;

/** The CLI shows people this much of a fetched page's text; --json and --out keep all of it. */
export const FETCH_PREVIEW_CHARS = 1_200;
