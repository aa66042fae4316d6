/**
 * The `exa` built-in: Exa's web search (`POST {baseUrl}/search`) as a SearchAdapter. It asks for
 * highlights rather than page text (token-efficient and included in the base price), maps each
 * result to a candidate, and reports what Exa says the call cost (`costDollars.total`). `expand`
 * asks Exa's contents API (`POST {baseUrl}/contents`) for a result URL's page text.
 */
import * as v from "valibot";
import { MAX_EXPAND_TEXT_CHARS, MAX_LOCATOR_CHARS, MAX_SNIPPET_CHARS } from "../protocol/limits.ts";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import { type Evidence, ProviderError, type SearchAdapter } from "../protocol/provider-contract.ts";
import type { StatusMeaning } from "../transport/classify-status.ts";
import {
  callJson,
  checkShape,
  quote,
  type Refusal,
  type RefusalReading,
  upstream,
} from "../transport/upstream.ts";

export const EXA_DEFAULT_BASE_URL = "https://api.exa.ai";

/** Highlight text asked per result: enough to fill a snippet, no more to read. */
export const EXA_HIGHLIGHT_CHARS = MAX_SNIPPET_CHARS;

/** Exa reports cost in dollars; the gateway counts micro-dollars. */
const MICROS_PER_DOLLAR = 1_000_000;

/** Joins several highlights of one page into one snippet. */
const HIGHLIGHT_SEPARATOR = " … ";

export type ExaOptions = {
  apiKey: string;
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Epoch milliseconds, for Retry-After dates. */
  now?: () => number;
  name?: string;
  scope?: string;
};

// Loose objects: Exa adds fields freely; only what we map is checked.
const ExaResultSchema = v.looseObject({
  url: v.pipe(v.string(), v.minLength(1)),
  title: v.nullish(v.string()),
  publishedDate: v.nullish(v.string()),
  author: v.nullish(v.string()),
  score: v.nullish(v.number()),
  text: v.nullish(v.string()),
  summary: v.nullish(v.string()),
  highlights: v.nullish(v.array(v.string())),
  highlightScores: v.nullish(v.array(v.number())),
});

const ExaResponseSchema = v.looseObject({
  results: v.array(ExaResultSchema),
  costDollars: v.nullish(v.looseObject({
    total: v.nullish(v.pipe(v.number(), v.finite(), v.minValue(0))),
  })),
});

/** One URL's outcome in a contents answer; Exa reports a page it could not fetch here, not as a status. */
const ExaContentStatusSchema = v.looseObject({
  id: v.string(),
  status: v.string(),
  error: v.nullish(v.looseObject({
    tag: v.nullish(v.string()),
    httpStatusCode: v.nullish(v.number()),
  })),
});

const ExaContentsSchema = v.looseObject({
  results: v.array(ExaResultSchema),
  statuses: v.nullish(v.array(ExaContentStatusSchema)),
});

const ExaErrorSchema = v.looseObject({
  error: v.optional(v.unknown()),
  tag: v.optional(v.unknown()),
});

export function exaAdapter(options: ExaOptions): SearchAdapter {
  const base = (options.baseUrl ?? EXA_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const up = upstream("exa", options);
  const contents = upstream("exa contents", options);
  const now = options.now ?? (() => Date.now());
  return {
    name: options.name ?? "exa",
    scope: options.scope ?? "web",
    async search({ query, limit }, signal) {
      const json = await callJson(
        up,
        `${base}/search`,
        {
          method: "POST",
          headers: {
            "x-api-key": options.apiKey,
            "content-type": "application/json",
            accept: "application/json",
          },
          body: JSON.stringify({
            query,
            numResults: limit,
            type: "auto",
            contents: { highlights: { maxCharacters: EXA_HIGHLIGHT_CHARS } },
          }),
        },
        signal,
        readExaRefusal,
      );
      const answer = checkShape("exa", json, ExaResponseSchema);
      const total = answer.costDollars?.total;
      return {
        candidates: answer.results.map(toCandidate),
        ...(typeof total === "number"
          ? { cost_micros: Math.round(total * MICROS_PER_DOLLAR) }
          : {}),
      };
    },
    async expand({ locator }, signal): Promise<Evidence> {
      const url = pageUrl(locator);
      const json = await callJson(
        contents,
        `${base}/contents`,
        {
          method: "POST",
          headers: {
            "x-api-key": options.apiKey,
            "content-type": "application/json",
            accept: "application/json",
          },
          // One character past the bound, so a page Exa had to cut is cut again, visibly.
          body: JSON.stringify({ urls: [url], text: { maxCharacters: MAX_EXPAND_TEXT_CHARS + 1 } }),
        },
        signal,
        readExaRefusal,
      );
      const answer = checkShape("exa contents", json, ExaContentsSchema);
      const failed = answer.statuses?.find((s) => s.status !== "success");
      if (failed) throw contentFailure(failed);
      const page = answer.results[0];
      if (page === undefined || typeof page.text !== "string") {
        throw new ProviderError("search_failed", "exa contents answered no text for this page", {
          retryable: false,
        });
      }
      return {
        title: page.title?.trim() || page.url,
        text: page.text,
        content_type: "text/plain",
        retrieved_at: new Date(now()).toISOString(),
      };
    },
  };
}

/**
 * The page a locator names: an exa locator is a result's http(s) URL, without credentials. Anything
 * else was never issued by exa and is never sent anywhere.
 */
function pageUrl(locator: string): string {
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    throw new ProviderError("locator_unknown", "an exa locator is a web page's URL");
  }
  if (
    (url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" ||
    url.password !== "" || locator.length > MAX_LOCATOR_CHARS
  ) {
    throw new ProviderError("locator_unknown", "an exa locator is an http or https page URL");
  }
  return url.href;
}

/** Exa's per-URL fetch failures (its contents status tags) as what they mean for the locator. */
function contentFailure(status: v.InferOutput<typeof ExaContentStatusSchema>): ProviderError {
  const tag = status.error?.tag ?? "unknown";
  const shown = /^[A-Z0-9_]{1,64}$/.test(tag) ? tag : "unknown";
  // The tag, not the page's own status, says what happened: Exa documents the tags.
  if (tag === "CRAWL_NOT_FOUND") {
    return new ProviderError(
      "locator_expired",
      `exa could not find the page any more [${shown}]; search again`,
    );
  }
  // A timeout may pass; a source that refuses Exa refuses it again.
  return new ProviderError("search_failed", `exa could not fetch the page [${shown}]`, {
    retryable: tag === "CRAWL_TIMEOUT",
  });
}

function toCandidate(r: v.InferOutput<typeof ExaResultSchema>): WireCandidate {
  const highlights = (r.highlights ?? []).filter((h) => h.trim() !== "");
  const snippet = highlights.length > 0
    ? highlights.join(HIGHLIGHT_SEPARATOR)
    : r.text?.trim() || r.summary?.trim() || null;
  const metadata: Record<string, unknown> = {};
  if (typeof r.score === "number") metadata.score = r.score;
  if (r.author) metadata.author = r.author;
  if (r.highlightScores && r.highlightScores.length > 0) {
    metadata.highlight_scores = r.highlightScores;
  }
  return {
    // Exa gives no title for some pages; the URL is the honest stand-in.
    title: r.title?.trim() || r.url,
    locator: r.url,
    snippet,
    published_at: r.publishedDate ?? null,
    metadata,
  };
}

/**
 * Exa's documented statuses (400, 401, 402, 403, 429, 5xx) that mean more than the common table
 * says: a rejected key, spent credits and a plan without access leave the provider unable to serve
 * this gateway until an operator acts, whatever the query.
 */
const EXA_STATUS_MEANINGS: Readonly<Record<number, StatusMeaning>> = {
  401: { means: "access_refused", says: "rejected the API key", hint: "check EXA_API_KEY" },
  402: { means: "access_refused", says: "says the credits or this key's budget are spent" },
  403: { means: "access_refused", says: "refused this key access" },
};

/** Exa's error body (`error`, and a `tag` naming the kind of error) and what its status means. */
function readExaRefusal({ status, body }: Refusal): RefusalReading {
  const parsed = v.safeParse(ExaErrorSchema, body);
  const tag = parsed.success && typeof parsed.output.tag === "string" &&
      /^[A-Z0-9_]{1,64}$/.test(parsed.output.tag)
    ? `[${parsed.output.tag}]`
    : "";
  const said = [tag, parsed.success ? quote(parsed.output.error) : ""].filter((p) => p !== "");
  return { meaning: EXA_STATUS_MEANINGS[status] ?? null, said: said.join(" ") };
}
