/**
 * What the evidence routes answer (docs/envelope.md, "Fetching a page"): a fetched page as
 * evidence (`result.evidence`, schemas/evidence.json), the receipt's claims, and a verify's
 * verdict. These schemas type the code and generate the JSON Schemas; tests validate every answer.
 */
import * as v from "valibot";
import { EVIDENCE_ROUTES, FETCH_FORMATS } from "./codes.ts";
import { MAX_EVIDENCE_LINKS } from "./fetch-limits.ts";
import { MAX_PASSAGES } from "./evidence-route-limits.ts";
import { MAX_HEADING_LEVEL, MAX_HTTP_STATUS, MIN_HTTP_STATUS } from "./limits.ts";

const Int = v.pipe(v.number(), v.integer(), v.minValue(0));
const Timestamp = v.pipe(v.string(), v.isoTimestamp());
/** A SHA-256 in lowercase hex. */
const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/));

/** One heading of the returned text and the lines it spans, up to the next heading of any level. */
export const AnchorSchema = v.strictObject({
  id: v.string(),
  heading: v.string(),
  level: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_HEADING_LEVEL)),
  /** 1-based lines of `markdown`, the heading's own line first. */
  line_start: v.pipe(v.number(), v.integer(), v.minValue(1)),
  line_end: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** SHA-256 of those lines, joined with `\n`. */
  sha256: Sha256,
});
export type Anchor = v.InferOutput<typeof AnchorSchema>;

/**
 * One passage of the returned text for the request's `query`: a paragraph (lines with no blank line
 * between them), its 1-based lines, and its score by the corpus engine's ranking (higher is better;
 * comparable within one answer only).
 */
export const PassageSchema = v.strictObject({
  text: v.string(),
  line_start: v.pipe(v.number(), v.integer(), v.minValue(1)),
  line_end: v.pipe(v.number(), v.integer(), v.minValue(1)),
  score: v.pipe(v.number(), v.minValue(0)),
});
export type Passage = v.InferOutput<typeof PassageSchema>;

/** What every fetched page's evidence holds, whichever format its text is in. */
const EVIDENCE_ENTRIES = {
  requested_url: v.string(),
  /** Where the last redirect led: the page the text was made from. */
  final_url: v.string(),
  status_code: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(MIN_HTTP_STATUS),
    v.maxValue(MAX_HTTP_STATUS),
  ),
  fetched_at: Timestamp,
  content_type: v.string(),
  /** Bytes of the body as received, decoded from transfer and content encodings. */
  bytes: Int,
  source_sha256: Sha256,
  /** The page's title; null when it has none. */
  title: v.nullable(v.string()),
  /** Cut at the request's `max_chars`, or the body at the fetch core's byte cap. */
  truncated: v.boolean(),
  /** SHA-256 of the UTF-8 of `markdown` (or `text`), as returned (after any cut). */
  markdown_sha256: Sha256,
  anchors: v.array(AnchorSchema),
  links: v.pipe(
    v.array(v.strictObject({ url: v.string(), text: v.string() })),
    v.maxLength(MAX_EVIDENCE_LINKS),
  ),
  robots: v.strictObject({ allowed: v.boolean(), unavailable: v.boolean() }),
  /** How the text was made: served as markdown or text by the site, or extracted from its HTML. */
  route: v.picklist(EVIDENCE_ROUTES),
  /**
   * Only with a `query`: the passages that answer it best, best first, at most `max_passages`;
   * empty when no paragraph holds a query term. Made from the text at answer time, so a cached
   * page answers each query with its own; the receipt covers the text they quote, not them.
   */
  passages: v.optional(v.pipe(v.array(PassageSchema), v.maxLength(MAX_PASSAGES))),
};

/**
 * A page fetched by the gateway, as it read it (docs/security.md, "Fetching pages"): its main
 * content in `markdown`, or in `text` for `format: "text"`.
 */
export const FetchedEvidenceSchema = v.union([
  v.strictObject({ ...EVIDENCE_ENTRIES, markdown: v.string() }),
  v.strictObject({ ...EVIDENCE_ENTRIES, text: v.string() }),
]);
export type FetchedEvidence = v.InferOutput<typeof FetchedEvidenceSchema>;

/** The text a fetch returned, whichever format: what `markdown_sha256` covers. */
export function evidenceText(evidence: FetchedEvidence): string {
  return "markdown" in evidence ? evidence.markdown : evidence.text;
}

/** The claims of a receipt: what the gateway signs about one fetch. */
export const ReceiptClaimsSchema = v.strictObject({
  iss: v.string(),
  iat: Int,
  jti: v.string(),
  requested_url: v.string(),
  final_url: v.string(),
  status_code: Int,
  fetched_at: Timestamp,
  content_type: v.string(),
  source_sha256: Sha256,
  markdown_sha256: Sha256,
  format: v.picklist(FETCH_FORMATS),
});
export type ReceiptClaims = v.InferOutput<typeof ReceiptClaimsSchema>;

/** `POST /v1/fetch` and `GET /v1/fetch`. */
export const FetchResultSchema = v.strictObject({
  evidence: FetchedEvidenceSchema,
  /** A compact JWS over the receipt's claims; null when the gateway has no signing key. */
  receipt: v.nullable(v.string()),
  /** Whether the answer came from the answer cache, and how old it is then. */
  cached: v.boolean(),
  age_ms: v.optional(Int),
  /** The body as received, base64, only when the request asked for `include_raw`. */
  raw_base64: v.optional(v.string()),
  warnings: v.array(v.string()),
});
export type FetchResult = v.InferOutput<typeof FetchResultSchema>;

export const VERDICTS = [
  "verified",
  "quote_not_found",
  "content_mismatch",
  "signature_invalid",
  "unsigned",
] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Where a quote was found: its lines in the markdown and the heading they sit under. */
export const QuoteFoundSchema = v.strictObject({
  line_start: v.pipe(v.number(), v.integer(), v.minValue(1)),
  line_end: v.pipe(v.number(), v.integer(), v.minValue(1)),
  anchor: v.nullable(
    v.strictObject({
      id: v.string(),
      heading: v.string(),
      level: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_HEADING_LEVEL)),
    }),
  ),
});
export type QuoteFound = v.InferOutput<typeof QuoteFoundSchema>;

/** `POST /v1/verify`: a verdict is an answer (`ok: true`), whatever it says. */
export const VerifyResultSchema = v.strictObject({
  verdict: v.picklist(VERDICTS),
  /** The verdict in words: what was checked and what failed. */
  reason: v.string(),
  /** The receipt's claims, once its signature checked out. */
  claims: v.optional(ReceiptClaimsSchema),
  /** Where the quote was found, for a `verified` verdict with a quote. */
  quote: v.optional(QuoteFoundSchema),
});
export type VerifyResult = v.InferOutput<typeof VerifyResultSchema>;
