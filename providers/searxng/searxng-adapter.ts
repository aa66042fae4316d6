/**
 * A SearXNG instance's JSON API (`GET {base}/search?q=...&format=json`) as a SearchAdapter.
 *
 * SearXNG asks many engines at once and reports the ones that failed in `unresponsive_engines`
 * (pairs of engine and reason). Results with some failed engines are still a success, with one
 * warning per failed engine; no results while engines failed is a failure, never an honest empty,
 * because the silence may be theirs.
 */
import {
  callJson,
  checkBaseUrl,
  checkIdentity,
  GET_JSON,
  healthFromProbe,
  notJson,
  ProviderError,
  type ReadRefusal,
  type SearchAdapter,
  type StatusMeaning,
  upstream,
  UPSTREAM_TIMEOUT_MS,
  type WireCandidate,
} from "../../src/kit/mod.ts";
import { isRecord } from "../../src/protocol/json-value.ts";

/**
 * A SearXNG page holds a few dozen results with short snippets, tens of kilobytes; this leaves
 * ample room and still bounds a runaway instance.
 */
export const MAX_SEARXNG_BODY_BYTES = 2_000_000;

/** Failed engines named in one failure message; the rest are counted. */
const MAX_ENGINES_NAMED = 5;

export type SearxngConfig = {
  baseUrl: URL;
  name: string;
  scope: string;
  /** Comma-separated SearXNG categories, engines and a language code; absent: the instance's defaults. */
  categories?: string;
  engines?: string;
  language?: string;
};

export type SearxngOptions = SearxngConfig & { fetch?: typeof fetch; now?: () => number };

/** The configuration from flags or bindings; throws ConfigError naming what to fix. */
export function searxngConfig(values: {
  base?: string | undefined;
  name?: string | undefined;
  scope?: string | undefined;
  categories?: string | undefined;
  engines?: string | undefined;
  language?: string | undefined;
}): SearxngConfig {
  const config: SearxngConfig = {
    baseUrl: checkBaseUrl("--base (SEARXNG_BASE_URL)", values.base),
    ...checkIdentity(values, { name: "searxng", scope: "web" }),
  };
  if (values.categories) config.categories = values.categories;
  if (values.engines) config.engines = values.engines;
  if (values.language) config.language = values.language;
  return config;
}

export function searxngAdapter(options: SearxngOptions): SearchAdapter {
  const up = upstream("SearXNG", options, {
    maxBodyBytes: MAX_SEARXNG_BODY_BYTES,
    timeoutMs: UPSTREAM_TIMEOUT_MS,
  });
  return {
    name: options.name,
    scope: options.scope,
    async search({ query, limit }, signal) {
      const url = new URL("search", options.baseUrl);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      if (options.categories) url.searchParams.set("categories", options.categories);
      if (options.engines) url.searchParams.set("engines", options.engines);
      if (options.language) url.searchParams.set("language", options.language);
      const body = await callJson(up, url, GET_JSON, signal, readRefusal);
      return toAnswer(body, limit);
    },
    // The instance's `/config` (its engines and settings as JSON) is its cheapest JSON answer:
    // no engine is asked, and an instance that answers it is up.
    health: (signal) =>
      healthFromProbe(
        async (probe) => {
          const body = await callJson(up, new URL("config", options.baseUrl), GET_JSON, probe);
          if (!isRecord(body)) throw notJson("SearXNG", "its /config is not a JSON object");
        },
        signal,
        options.now ? { now: options.now } : {},
      ),
  };
}

/** SearXNG answers 403 when the instance does not enable the json format: an operator must act. */
const SEARXNG_STATUS_MEANINGS: Readonly<Record<number, StatusMeaning>> = {
  403: {
    means: "access_refused",
    says: "refused the JSON API",
    hint: "the instance must list json under search.formats in settings.yml",
  },
};

const readRefusal: ReadRefusal = ({ status }) => ({ meaning: SEARXNG_STATUS_MEANINGS[status] });

function toAnswer(
  body: unknown,
  limit: number,
): { candidates: WireCandidate[]; warnings: string[] } {
  if (!isRecord(body) || !Array.isArray(body.results)) {
    throw notJson("SearXNG", "it has no results list");
  }
  const failed = unresponsive(body.unresponsive_engines);
  const candidates: WireCandidate[] = [];
  let unusable = 0;
  for (const item of body.results) {
    const candidate = toCandidate(item);
    if (candidate === null) unusable++;
    else if (candidates.length < limit) candidates.push(candidate);
  }
  if (candidates.length === 0 && failed.length > 0) {
    const named = failed.slice(0, MAX_ENGINES_NAMED).map(([e, why]) => `${e} (${why})`);
    const more = failed.length > MAX_ENGINES_NAMED
      ? ` and ${failed.length - MAX_ENGINES_NAMED} more`
      : "";
    throw new ProviderError(
      "search_failed",
      `SearXNG found nothing while engines failed: ${named.join(", ")}${more}`,
    );
  }
  const warnings = failed.map(([engine, why]) =>
    `SearXNG engine "${engine}" did not answer: ${why}`
  );
  if (unusable > 0) warnings.push(`${unusable} SearXNG results without a URL were left out`);
  return { candidates, warnings };
}

function toCandidate(item: unknown): WireCandidate | null {
  if (!isRecord(item) || typeof item.url !== "string" || item.url === "") return null;
  const metadata: Record<string, unknown> = {};
  if (Array.isArray(item.engines)) {
    metadata.engines = item.engines.filter((e) => typeof e === "string");
  } else if (typeof item.engine === "string") {
    metadata.engines = [item.engine];
  }
  if (typeof item.score === "number" && Number.isFinite(item.score)) metadata.score = item.score;
  if (typeof item.category === "string") metadata.category = item.category;
  return {
    // Some engines give no title; the URL is the honest stand-in.
    title: typeof item.title === "string" && item.title.trim() !== "" ? item.title : item.url,
    locator: item.url,
    snippet: typeof item.content === "string" && item.content.trim() !== "" ? item.content : null,
    published_at: typeof item.publishedDate === "string" ? item.publishedDate : null,
    metadata,
  };
}

/** `unresponsive_engines` as [engine, reason] pairs; anything else in the list is ignored. */
function unresponsive(value: unknown): Array<[string, string]> {
  if (!Array.isArray(value)) return [];
  const pairs: Array<[string, string]> = [];
  for (const entry of value) {
    if (Array.isArray(entry) && typeof entry[0] === "string") {
      pairs.push([entry[0], typeof entry[1] === "string" ? entry[1] : "no reason given"]);
    }
  }
  return pairs;
}
