/**
 * The search's filters, applied by the gateway to every candidate of every attempt after
 * sanitising and before fusion (docs/envelope.md, "Filters"), and the part of them a provider
 * receives (docs/protocol.md, "Filters"). A candidate the gateway cannot judge is dropped: a
 * filter that lets through what it cannot read would break the caller's promise, such as "never
 * this site".
 */
import type { Candidate } from "../protocol/envelope-schema.ts";
import { MAX_WARNING_CHARS, MAX_WARNINGS } from "../protocol/limits.ts";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import {
  dayOfFullDate,
  FILTER_NAMES,
  type FilterName,
  filterNamesOf,
  type SearchFilters,
} from "../protocol/search-filters.ts";
import { redact } from "../io/redact.ts";
import { sanitiseAnswer } from "./sanitize.ts";

/**
 * The filters the gateway itself can evaluate on a sanitised candidate: all of today's. A filter
 * outside this set would have to be honoured by the provider; see skipForFilters.
 */
export const GATEWAY_EVALUATES: ReadonlySet<FilterName> = new Set(FILTER_NAMES);

/**
 * A host as filters compare it, the way the dedup key compares hosts: lowercase, one leading
 * `www.` removed (the port is no part of it). One trailing dot is removed too, as `example.org.`
 * names the same host, so it cannot slip past an exclusion. Null for a locator that is not an
 * http(s) URL: it has no host to judge.
 */
export function filterHost(locator: string): string | null {
  if (!/^https?:\/\//i.test(locator)) return null;
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    return null;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "").replace(/^www\./, "");
  return host === "" ? null : host;
}

/** A filter's host name as compared: one leading `www.` removed, as from a candidate's host. */
export function filterName(name: string): string {
  return name.replace(/^www\./, "");
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** Whether a host is the named one or a subdomain of it; an IP address matches only itself. */
export function hostMatches(host: string, name: string): boolean {
  if (host === name) return true;
  return !IPV4.test(host) && host.endsWith(`.${name}`);
}

/**
 * RFC 3339: a full date, or a date-time with seconds and an offset (`T` or a space between, any
 * case; fractions of a second allowed).
 */
const PUBLISHED =
  /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;

/**
 * The day a candidate was published, as days since 1970-01-01, or null when `published_at` is
 * missing or not RFC 3339. A date-time counts by the calendar date written in it, in its own
 * offset: `2025-01-01T00:30:00+02:00` was published on 2025-01-01, as its reader sees.
 */
export function publishedDay(publishedAt: string | null): number | null {
  if (publishedAt === null) return null;
  const m = PUBLISHED.exec(publishedAt);
  if (m === null) return null;
  const [, date, hh, mm, ss, oh, om] = m;
  if (hh !== undefined && (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 60)) return null;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return null;
  return dayOfFullDate(date as string);
}

/** Why a candidate failed, for the attempt's warning. */
type Failed = "domain" | "date";

/** The filters compiled once per search: names compared as hosts, dates as day numbers. */
export type CompiledFilters = {
  include: readonly string[] | null;
  exclude: readonly string[];
  after: number | null;
  before: number | null;
};

export function compileFilters(filters: SearchFilters): CompiledFilters {
  const day = (text: string | undefined) => text === undefined ? null : dayOfFullDate(text);
  return {
    include: filters.domains?.include?.map(filterName) ?? null,
    exclude: filters.domains?.exclude?.map(filterName) ?? [],
    after: day(filters.published_after),
    before: day(filters.published_before),
  };
}

/** Null when the candidate passes every filter, else the first kind it failed or cannot be judged by. */
export function failedFilter(candidate: Candidate, f: CompiledFilters): Failed | null {
  if (f.include !== null || f.exclude.length > 0) {
    const host = filterHost(candidate.locator);
    if (host === null) return "domain";
    if (f.include !== null && !f.include.some((name) => hostMatches(host, name))) return "domain";
    if (f.exclude.some((name) => hostMatches(host, name))) return "domain";
  }
  if (f.after !== null || f.before !== null) {
    const day = publishedDay(candidate.published_at);
    if (day === null) return "date";
    if (f.after !== null && day < f.after) return "date";
    if (f.before !== null && day > f.before) return "date";
  }
  return null;
}

export type FilteredAnswer = {
  candidates: Candidate[];
  warnings: string[];
  /** Candidates dropped by the filters (after the sanitiser's own cuts). */
  filtered_out: number;
};

/**
 * One answer sanitised (as sanitiseAnswer does) and then filtered. The gateway's warnings, the
 * sanitiser's and the filters', always survive the warning cap; the provider's fill the rest.
 */
export function filterAnswer(
  wire: readonly WireCandidate[],
  providerWarnings: readonly string[],
  limit: number,
  filters: CompiledFilters,
): FilteredAnswer {
  const sanitised = sanitiseAnswer(wire, [], limit);
  const candidates: Candidate[] = [];
  const failed = { domain: 0, date: 0 };
  for (const c of sanitised.candidates) {
    const why = failedFilter(c, filters);
    if (why === null) candidates.push(c);
    else failed[why]++;
  }
  const filtered_out = failed.domain + failed.date;
  const ours = [...sanitised.warnings];
  if (filtered_out > 0) {
    const parts = [
      ...(failed.domain > 0
        ? [`${failed.domain} by the domain filter (or with no http(s) host)`]
        : []),
      ...(failed.date > 0
        ? [`${failed.date} by the date filter (or with no RFC 3339 published_at)`]
        : []),
    ];
    ours.push(
      candidates.length === 0
        ? `an honest empty after filtering: all ${filtered_out} candidate(s) the provider found were dropped, ${
          parts.join(" and ")
        }`
        : `dropped ${filtered_out} candidate(s) that failed the search's filters: ${
          parts.join(" and ")
        }`,
    );
  }
  const theirs = providerWarnings
    .slice(0, Math.max(0, MAX_WARNINGS - ours.length))
    .map((w) => redact(w, MAX_WARNING_CHARS));
  return { candidates, warnings: [...theirs, ...ours], filtered_out };
}

/**
 * The part of the filters a provider receives: only those it declared (through
 * `AttemptDeps.acceptsFilters`), with host names as the gateway compares them. Null when it
 * declared none of the filters in use: then its request has no `filters` field at all, so a strict
 * v1 provider that never declared filters never sees one.
 */
export function filtersFor(
  filters: SearchFilters,
  declared: readonly FilterName[],
): SearchFilters | null {
  const out: SearchFilters = {};
  for (const name of filterNamesOf(filters)) {
    if (!declared.includes(name)) continue;
    if (name === "domains") {
      const { include, exclude } = filters.domains ?? {};
      out.domains = {
        ...(include === undefined ? {} : { include: unique(include) }),
        ...(exclude === undefined ? {} : { exclude: unique(exclude) }),
      };
    } else {
      const value = filters[name];
      if (value !== undefined) out[name] = value;
    }
  }
  return Object.keys(out).length === 0 ? null : out;
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names.map(filterName))];
}

/**
 * Whether a provider must be skipped for the search's filters (`filter_unsupported`): only when
 * it cannot honour a filter in use, going by what it declared, and the gateway cannot evaluate
 * that filter either. The gateway evaluates every filter there is today (GATEWAY_EVALUATES), so
 * this never skips a provider for them; it decides for a filter only a provider could apply.
 */
export function skipForFilters(
  filters: SearchFilters,
  declared: readonly FilterName[],
  evaluable: ReadonlySet<FilterName> = GATEWAY_EVALUATES,
): boolean {
  return filterNamesOf(filters).some((name) => !evaluable.has(name) && !declared.includes(name));
}
