/**
 * The filters of a search request (docs/envelope.md, "Filters") and the subset a provider receives
 * in its request (docs/protocol.md, "Filters"). One shape serves both, so a provider reads the
 * caller's filters as the caller wrote them, less the ones it did not declare.
 */
import * as v from "valibot";
import { MAX_FILTER_DOMAINS, MAX_HOST_LABEL_CHARS, MAX_HOST_NAME_CHARS } from "./limits.ts";

/**
 * The filters a provider may declare in `describe` (and so receive): `domains` covers both lists.
 * Each is a field of the filters object, so a provider that declared a name gets that field.
 */
export const FILTER_NAMES = ["domains", "published_after", "published_before"] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

/**
 * A host name as DNS writes it, in lowercase: labels of letters, digits and inner hyphens, joined
 * by dots. An internationalised name is written in its `xn--` form, as URL parsing gives a host.
 */
const LABEL = `[a-z0-9](?:[a-z0-9-]{0,${MAX_HOST_LABEL_CHARS - 2}}[a-z0-9])?`;
export const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** What a caller is told when a name is not a host name. */
export const HOST_NAME_RULE =
  `a host name in lowercase (letters, digits, dots and hyphens, such as docs.example.org), at most ${MAX_HOST_NAME_CHARS} characters`;

const HostName = v.pipe(v.string(), v.maxLength(MAX_HOST_NAME_CHARS), v.regex(HOST_NAME));

/** At least one name: an empty include list would keep nothing, and an empty exclude list says nothing. */
const HostList = v.pipe(v.array(HostName), v.minLength(1), v.maxLength(MAX_FILTER_DOMAINS));

/**
 * An RFC 3339 full date (YYYY-MM-DD). The schema checks the form (JSON Schema's `format: date`);
 * checkFilters also refuses a day its month does not have, which the form alone lets through.
 */
const FullDate = v.pipe(v.string(), v.isoDate());

/**
 * A strict object that also refuses an array: valibot's object schemas take `[]` as an object with
 * no keys, where JSON Schema's `type: object` (which the generated schema says) refuses it. The
 * schema is the same one, so the generator still writes it; only its run refuses an array first.
 */
function strictJsonObject<const E extends v.ObjectEntries>(entries: E) {
  const schema = v.strictObject(entries);
  const run: (typeof schema)["~run"] = (dataset, config) => {
    if (!Array.isArray(dataset.value)) return schema["~run"](dataset, config);
    v._addIssue(schema, "type", dataset, config);
    return dataset as unknown as ReturnType<(typeof schema)["~run"]>;
  };
  return Object.create(schema, { "~run": { value: run } }) as typeof schema;
}

export const SearchFiltersSchema = strictJsonObject({
  domains: v.optional(strictJsonObject({
    include: v.optional(HostList),
    exclude: v.optional(HostList),
  })),
  published_after: v.optional(FullDate),
  published_before: v.optional(FullDate),
});

/** Filters as validated: every field optional, none null. */
export type SearchFilters = {
  domains?: { include?: string[]; exclude?: string[] };
  published_after?: string;
  published_before?: string;
};

/** The members of each object of the filters, by path, for messages about an unknown one. */
export const FILTER_FIELDS: Readonly<Record<string, readonly string[]>> = {
  filters: Object.keys(SearchFiltersSchema.entries),
  "filters.domains": ["include", "exclude"],
};

/** The field a problem with one list item is reported under: the list, as the GET form names it. */
export function filterFieldOf(path: string): string {
  return /^filters\.domains\.(?:include|exclude)\.\d+$/.test(path)
    ? path.slice(0, path.lastIndexOf("."))
    : path;
}

/** Days since 1970-01-01 of a full date, or null when the month has no such day. */
export function dayOfFullDate(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m === null) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // setUTCFullYear, unlike Date.UTC, reads years 0-99 as written rather than as 1900-1999.
  const date = new Date(0);
  const ms = date.setUTCFullYear(year, month - 1, day);
  // A day the month lacks (2025-02-30) rolls over into the next month: not the date written.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return Math.floor(ms / 86_400_000);
}

export type FilterProblem = { field: string; message: string };

/**
 * What the schema cannot say: a date its month does not have, and a range that ends before it
 * starts. Null when the filters are sound.
 */
export function checkFilters(filters: SearchFilters): FilterProblem | null {
  const after = filters.published_after;
  const before = filters.published_before;
  for (const [name, value] of [["published_after", after], ["published_before", before]]) {
    if (value !== undefined && dayOfFullDate(value) === null) {
      return {
        field: `filters.${name}`,
        message: `filters.${name} is not a date of the calendar: ${value} has no such day`,
      };
    }
  }
  if (after !== undefined && before !== undefined && after > before) {
    return {
      field: "filters.published_after",
      message:
        `filters.published_after (${after}) is later than filters.published_before (${before}); both are inclusive, so no date could match`,
    };
  }
  return null;
}

/** Filters with nothing in them are no filters: null, so a search without any reads the same. */
export function normaliseFilters(
  filters: v.InferOutput<typeof SearchFiltersSchema> | undefined,
): SearchFilters | null {
  if (filters === undefined) return null;
  const out: SearchFilters = {};
  const { include, exclude } = filters.domains ?? {};
  if (include !== undefined || exclude !== undefined) {
    out.domains = {
      ...(include === undefined ? {} : { include }),
      ...(exclude === undefined ? {} : { exclude }),
    };
  }
  if (filters.published_after !== undefined) out.published_after = filters.published_after;
  if (filters.published_before !== undefined) out.published_before = filters.published_before;
  return Object.keys(out).length === 0 ? null : out;
}

/** The filter names a request uses, in FILTER_NAMES order. */
export function filterNamesOf(filters: SearchFilters): FilterName[] {
  return FILTER_NAMES.filter((name) => filters[name] !== undefined);
}
