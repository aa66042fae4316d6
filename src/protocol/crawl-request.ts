/**
 * The request of `POST /v1/crawl` (docs/envelope.md, "Crawling a site"), as a valibot schema and
 * the function that reads JSON text into a request or a usage-error code, as strictly as a fetch
 * request (fetch-request.ts): an unknown or repeated field, a null, or a value of the wrong type or
 * range is refused before anything is fetched.
 */
import * as v from "valibot";
import { MAX_QUERY_CHARS } from "./limits.ts";
import { MAX_FETCH_URL_CHARS } from "./fetch-limits.ts";
import {
  DEFAULT_CRAWL_DEPTH,
  DEFAULT_CRAWL_PAGES,
  MAX_CRAWL_DEPTH,
  MAX_CRAWL_PAGES,
} from "./crawl-limits.ts";
import { DEFAULT_PASSAGES } from "./evidence-route-limits.ts";
import { type Parsed, problemOf, readFields } from "./fetch-request.ts";
import { integerIn, type IntegerRange } from "./integer-range.ts";

/** A crawl's integer fields. */
const CRAWL_RANGES = {
  max_pages: { min: 1, max: MAX_CRAWL_PAGES, code: "invalid_field" },
  max_depth: { min: 0, max: MAX_CRAWL_DEPTH, code: "invalid_field" },
} as const satisfies Record<string, IntegerRange>;

export const CrawlRequestSchema = v.strictObject({
  /** The first page: an absolute http: or https: URL; its origin is the only one crawled. */
  url: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_FETCH_URL_CHARS)),
  /** Pages fetched at most, the first included. */
  max_pages: v.optional(integerIn(CRAWL_RANGES.max_pages)),
  /** Links followed from the first page at most; 0 fetches the first page alone. */
  max_depth: v.optional(integerIn(CRAWL_RANGES.max_depth)),
  /** Adds each page's `evidence.passages`, as a fetch with this query does. */
  query: v.optional(v.pipe(v.string(), v.regex(/\S/), v.maxLength(MAX_QUERY_CHARS))),
});

export type CrawlAsk = {
  url: string;
  max_pages: number;
  max_depth: number;
  query?: string;
  /** Each page's passages at most, with a query: a fetch's default. */
  max_passages: number;
};

export const CRAWL_REQUEST_FIELDS: readonly string[] = Object.keys(CrawlRequestSchema.entries);

/** A crawl request as JSON text. */
export function parseCrawlRequestText(text: string, source = "the body"): Parsed<CrawlAsk> {
  const read = readFields(text, CRAWL_REQUEST_FIELDS, "crawl", source);
  if (!read.ok) return read;
  const parsed = v.safeParse(CrawlRequestSchema, read.value, { abortEarly: false });
  if (!parsed.success) {
    return {
      ok: false,
      problem: problemOf(parsed.issues, read.value, "crawl", CRAWL_REQUEST_FIELDS, CRAWL_RANGES),
    };
  }
  const r = parsed.output;
  return {
    ok: true,
    request: {
      url: r.url,
      max_pages: r.max_pages ?? DEFAULT_CRAWL_PAGES,
      max_depth: r.max_depth ?? DEFAULT_CRAWL_DEPTH,
      ...(r.query === undefined ? {} : { query: r.query }),
      max_passages: DEFAULT_PASSAGES,
    },
  };
}
