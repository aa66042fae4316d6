/**
 * One event of a crawl's stream (docs/envelope.md, "Crawling a site"), as valibot schemas: a line
 * of NDJSON, or the `data:` of an SSE event whose `event:` is the same name. The OpenAPI document
 * describes `POST /v1/crawl`'s stream with it, and tests validate real streams against that.
 */
import * as v from "valibot";
import { ENVELOPE_CODES } from "./codes.ts";
import { FetchResultSchema } from "./evidence-schema.ts";
import { MAX_CRAWL_DEPTH } from "./crawl-limits.ts";

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Depth = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_CRAWL_DEPTH + 1));

/**
 * Why a URL the crawl met was not fetched, or fetched and not answered as a page: `robots` (its
 * robots.txt disallows it), `other_origin` (another origin, or a redirect that led to one), `type`
 * (not a page a fetch reads), `limit` (past `max_pages` or `max_depth`), `failed` (the fetch was
 * refused or failed: `code` and `message` say how).
 */
export const CRAWL_SKIP_REASONS = ["robots", "other_origin", "type", "limit", "failed"] as const;
export type CrawlSkipReason = (typeof CRAWL_SKIP_REASONS)[number];

/**
 * How a crawl ended: `complete` (nothing left to fetch within `max_depth`), `max_pages`,
 * `deadline` (MAX_CRAWL_DURATION_MS), `refused` (a page's admission was refused: `code` says why,
 * `rate_limited` or `overloaded`). A caller that goes away gets no `done`.
 */
export const CRAWL_ENDINGS = ["complete", "max_pages", "deadline", "refused"] as const;
export type CrawlEnding = (typeof CRAWL_ENDINGS)[number];

export const CrawlSkippedSchema = v.strictObject({
  event: v.literal("skipped"),
  request_id: v.string(),
  url: v.string(),
  /** The depth the URL was found at (the first page is 0). */
  depth: Depth,
  reason: v.picklist(CRAWL_SKIP_REASONS),
  /** For `limit`: which. */
  limit: v.optional(v.picklist(["max_pages", "max_depth"])),
  /** For `failed`: the code a fetch of the page answered. */
  code: v.optional(v.picklist(ENVELOPE_CODES)),
  message: v.optional(v.string()),
});
export type CrawlSkipped = v.InferOutput<typeof CrawlSkippedSchema>;

export const CrawlCountsSchema = v.strictObject({
  /** Pages answered as `page` events. */
  pages: Count,
  /** URLs skipped, by reason, every one counted (the events stop at MAX_CRAWL_SKIPPED_EVENTS). */
  skipped: v.strictObject({
    robots: Count,
    other_origin: Count,
    type: Count,
    limit: Count,
    failed: Count,
  }),
});
export type CrawlCounts = v.InferOutput<typeof CrawlCountsSchema>;

/** `tracefetch crawl`'s envelope: how the crawl ended and its counts (its `done` event, read). */
export const CrawlResultSchema = v.strictObject({
  ended: v.picklist(CRAWL_ENDINGS),
  ...CrawlCountsSchema.entries,
});
export type CrawlResult = v.InferOutput<typeof CrawlResultSchema>;

export const CrawlEventSchema = v.variant("event", [
  v.strictObject({
    event: v.literal("page"),
    request_id: v.string(),
    /** The URL as the crawl asked it; `result.evidence.final_url` is where it led. */
    url: v.string(),
    depth: Depth,
    /** What `POST /v1/fetch` answers in `result` for this page. */
    result: FetchResultSchema,
  }),
  CrawlSkippedSchema,
  v.strictObject({
    event: v.literal("done"),
    request_id: v.string(),
    /** `ok`, or for `refused` the admission's code. */
    code: v.picklist(ENVELOPE_CODES),
    ended: v.picklist(CRAWL_ENDINGS),
    ...CrawlCountsSchema.entries,
    message: v.optional(v.string()),
  }),
  /** NDJSON only: SSE sends a `: heartbeat` comment line instead. */
  v.strictObject({ event: v.literal("heartbeat"), request_id: v.string() }),
]);
export type CrawlEvent = v.InferOutput<typeof CrawlEventSchema>;
