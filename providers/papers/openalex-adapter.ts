/**
 * Scholarly search through OpenAlex (`GET {base}/works?search=...&per-page=N`) as a SearchAdapter.
 * Each work becomes a candidate: its DOI URL (else its OpenAlex id URL) as the locator, the
 * abstract rebuilt from OpenAlex's inverted index as the snippet, and citations, year, venue and
 * the first authors as metadata.
 */
import {
  callJson,
  checkBaseUrl,
  checkIdentity,
  GET_JSON,
  healthFromProbe,
  notJson,
  type ReadRefusal,
  type SearchAdapter,
  type StatusMeaning,
  upstream,
  UPSTREAM_TIMEOUT_MS,
  type WireCandidate,
} from "../../src/kit/mod.ts";
import { isRecord } from "../../src/protocol/json-value.ts";

export const OPENALEX_DEFAULT_BASE_URL = "https://api.openalex.org";

/**
 * What we ask OpenAlex for: only the fields we map. A full work record carries references,
 * concepts and locations we would throw away, several kilobytes each.
 */
export const OPENALEX_SELECT = [
  "id",
  "doi",
  "display_name",
  "publication_date",
  "publication_year",
  "cited_by_count",
  "abstract_inverted_index",
  "authorships",
  "primary_location",
].join(",");

/**
 * One hundred selected works with abstracts and author lists are well under a megabyte; this
 * leaves room for long author lists and still bounds a runaway answer.
 */
export const MAX_OPENALEX_BODY_BYTES = 4_000_000;

/**
 * Words of an abstract rebuilt, by position. More than fill a snippet (1,600 code points is about
 * 250 words), so the gateway's own cut, marked and listed in `truncated`, decides where it ends;
 * the cap bounds our work and ignores absurd positions.
 */
export const MAX_ABSTRACT_WORDS = 400;

/** Authors named in metadata: enough to recognise a paper; the count says how many there are. */
export const MAX_AUTHORS = 5;

export type OpenAlexConfig = {
  baseUrl: URL;
  name: string;
  scope: string;
  /** OpenAlex asks callers to identify themselves with an email address (the "polite pool"). */
  mailto?: string;
  /** An OpenAlex API key; without one OpenAlex allows only a small daily budget. */
  apiKey?: string;
};

export type OpenAlexOptions = OpenAlexConfig & { fetch?: typeof fetch; now?: () => number };

/** The configuration from flags or bindings; throws ConfigError naming what to fix. */
export function openAlexConfig(values: {
  base?: string | undefined;
  name?: string | undefined;
  scope?: string | undefined;
  mailto?: string | undefined;
  apiKey?: string | undefined;
}): OpenAlexConfig {
  const config: OpenAlexConfig = {
    baseUrl: checkBaseUrl("--base (OPENALEX_BASE_URL)", values.base ?? OPENALEX_DEFAULT_BASE_URL),
    ...checkIdentity(values, { name: "papers", scope: "papers" }),
  };
  if (values.mailto) config.mailto = values.mailto;
  if (values.apiKey) config.apiKey = values.apiKey;
  return config;
}

export function openAlexAdapter(options: OpenAlexOptions): SearchAdapter {
  const up = upstream("OpenAlex", options, {
    maxBodyBytes: MAX_OPENALEX_BODY_BYTES,
    timeoutMs: UPSTREAM_TIMEOUT_MS,
  });
  return {
    name: options.name,
    scope: options.scope,
    async search({ query, limit }, signal) {
      const url = new URL("works", options.baseUrl);
      url.searchParams.set("search", query);
      url.searchParams.set("per-page", String(limit));
      url.searchParams.set("select", OPENALEX_SELECT);
      if (options.mailto) url.searchParams.set("mailto", options.mailto);
      // The key travels in the query, as OpenAlex documents; no message of ours shows the URL.
      if (options.apiKey) url.searchParams.set("api_key", options.apiKey);
      const body = await callJson(up, url, GET_JSON, signal, readRefusal);
      if (!isRecord(body) || !Array.isArray(body.results)) {
        throw notJson("OpenAlex", "it has no results list");
      }
      const candidates: WireCandidate[] = [];
      for (const work of body.results) {
        const candidate = toCandidate(work);
        if (candidate !== null && candidates.length < limit) candidates.push(candidate);
      }
      return { candidates };
    },
    // One work, its id only: the cheapest call that proves the works API answers, and its
    // `meta.count` (every work OpenAlex holds) is the document count.
    health: (signal) =>
      healthFromProbe(
        async (probe) => {
          const url = new URL("works", options.baseUrl);
          url.searchParams.set("per-page", "1");
          url.searchParams.set("select", "id");
          if (options.mailto) url.searchParams.set("mailto", options.mailto);
          if (options.apiKey) url.searchParams.set("api_key", options.apiKey);
          const body = await callJson(up, url, GET_JSON, probe, readRefusal);
          if (!isRecord(body) || !Array.isArray(body.results)) {
            throw notJson("OpenAlex", "it has no results list");
          }
          const count = isRecord(body.meta) ? body.meta.count : undefined;
          return typeof count === "number" && Number.isSafeInteger(count) && count >= 0
            ? { document_count: count }
            : {};
        },
        signal,
        options.now ? { now: options.now } : {},
      ),
  };
}

/**
 * OpenAlex documents 403 as "rate limit exceeded; slow down", alongside 429 for the daily limit;
 * 401 means the API key was refused, which only an operator can fix.
 */
const OPENALEX_STATUS_MEANINGS: Readonly<Record<number, StatusMeaning>> = {
  401: { means: "access_refused", says: "refused the API key", hint: "check OPENALEX_API_KEY" },
  403: { means: "rate_limit" },
};

const readRefusal: ReadRefusal = ({ status }) => ({ meaning: OPENALEX_STATUS_MEANINGS[status] });

function toCandidate(work: unknown): WireCandidate | null {
  if (!isRecord(work) || typeof work.id !== "string" || work.id === "") return null;
  const doi = typeof work.doi === "string" && work.doi !== "" ? work.doi : null;
  const metadata: Record<string, unknown> = { openalex_id: work.id };
  if (typeof work.cited_by_count === "number") metadata.citation_count = work.cited_by_count;
  if (typeof work.publication_year === "number") metadata.year = work.publication_year;
  const venue = primaryVenue(work.primary_location);
  if (venue !== null) metadata.venue = venue;
  const { names, count } = authors(work.authorships);
  if (count > 0) {
    metadata.authors = names;
    metadata.author_count = count;
  }
  const title = typeof work.display_name === "string" && work.display_name.trim() !== ""
    ? work.display_name
    : doi ?? work.id;
  return {
    title,
    locator: doi ?? work.id,
    snippet: rebuildAbstract(work.abstract_inverted_index),
    published_at: typeof work.publication_date === "string" ? work.publication_date : null,
    metadata,
  };
}

/**
 * OpenAlex ships abstracts as an inverted index (`{"word": [positions]}`) for licensing reasons;
 * the words in position order are the abstract. Null when there is none.
 */
export function rebuildAbstract(index: unknown): string | null {
  if (!isRecord(index)) return null;
  const words: string[] = [];
  for (const [word, positions] of Object.entries(index)) {
    if (!Array.isArray(positions)) continue;
    for (const p of positions) {
      if (Number.isInteger(p) && p >= 0 && p < MAX_ABSTRACT_WORDS) words[p] = word;
    }
  }
  // Array.prototype.filter skips holes: positions nobody claimed.
  const text = words.filter((w) => w !== undefined).join(" ").trim();
  return text === "" ? null : text;
}

function primaryVenue(location: unknown): string | null {
  if (!isRecord(location) || !isRecord(location.source)) return null;
  const name = location.source.display_name;
  return typeof name === "string" && name !== "" ? name : null;
}

/** The first MAX_AUTHORS names, and how many there are (some papers list thousands). */
function authors(authorships: unknown): { names: string[]; count: number } {
  const names: string[] = [];
  let count = 0;
  if (!Array.isArray(authorships)) return { names, count };
  for (const a of authorships) {
    if (isRecord(a) && isRecord(a.author) && typeof a.author.display_name === "string") {
      count++;
      if (names.length < MAX_AUTHORS) names.push(a.author.display_name);
    }
  }
  return { names, count };
}
