/**
 * The `github` built-in: GitHub's REST search (`GET {baseUrl}/search/repositories` and
 * `/search/issues`) as a SearchAdapter. With kind "both" it asks both at once and interleaves the
 * two ranked lists, so the best repository and the best issue both reach the top of the answer.
 * `expand` reads one issue, pull request or repository its search listed (`GET
 * {baseUrl}/repos/{owner}/{repo}/issues/{n}` or `/repos/{owner}/{repo}`), with a URL built only from
 * the validated parts of a locator of its own shape.
 */
import * as v from "valibot";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import {
  type Evidence,
  type ExpandRequest,
  ProviderError,
  type SearchAdapter,
  type SearchAnswer,
} from "../protocol/provider-contract.ts";
import type { StatusMeaning } from "../transport/classify.ts";
import {
  callJson,
  checkShape,
  quote,
  type Refusal,
  type RefusalReading,
  upstream,
} from "../transport/upstream.ts";

export const GITHUB_DEFAULT_BASE_URL = "https://api.github.com";

/** The REST API version whose search answers these schemas describe. */
export const GITHUB_API_VERSION = "2022-11-28";

/** GitHub refuses requests without a User-Agent; it names us so GitHub can contact the operator. */
export const GITHUB_USER_AGENT = "tracefetch-edge";

/**
 * GitHub's documented wait for a secondary rate limit that names no time: "wait for at least one
 * minute before retrying".
 */
export const GITHUB_SECONDARY_LIMIT_WAIT_MS = 60_000;

export type GithubKind = "repositories" | "issues" | "both";

export type GithubOptions = {
  token: string;
  baseUrl?: string;
  /** The host of the web URLs its search answers (`html_url`): the only locators expand accepts. */
  htmlHost?: string;
  kind?: GithubKind;
  fetch?: typeof fetch;
  /** Epoch milliseconds, to turn `x-ratelimit-reset` (epoch seconds) into a wait. */
  now?: () => number;
  name?: string;
  scope?: string;
};

// Loose objects: GitHub's items carry dozens of fields; only what we map is checked.
const RepositorySchema = v.looseObject({
  full_name: v.pipe(v.string(), v.minLength(1)),
  html_url: v.pipe(v.string(), v.minLength(1)),
  description: v.nullish(v.string()),
  pushed_at: v.nullish(v.string()),
  updated_at: v.nullish(v.string()),
  stargazers_count: v.nullish(v.number()),
  forks_count: v.nullish(v.number()),
  language: v.nullish(v.string()),
});

const IssueSchema = v.looseObject({
  title: v.string(),
  html_url: v.pipe(v.string(), v.minLength(1)),
  number: v.nullish(v.number()),
  body: v.nullish(v.string()),
  state: v.nullish(v.string()),
  comments: v.nullish(v.number()),
  created_at: v.nullish(v.string()),
  repository_url: v.nullish(v.string()),
  // Present (an object) only on pull requests, which the issues search also finds.
  pull_request: v.nullish(v.unknown()),
});

const searchSchema = <T extends v.GenericSchema>(item: T) =>
  v.looseObject({ incomplete_results: v.nullish(v.boolean()), items: v.array(item) });
const RepositorySearchSchema = searchSchema(RepositorySchema);
const IssueSearchSchema = searchSchema(IssueSchema);

const GithubErrorSchema = v.looseObject({ message: v.optional(v.unknown()) });

const IssueDetailSchema = v.looseObject({
  title: v.string(),
  body: v.nullish(v.string()),
  updated_at: v.nullish(v.string()),
});

const RepositoryDetailSchema = v.looseObject({
  full_name: v.pipe(v.string(), v.minLength(1)),
  description: v.nullish(v.string()),
  homepage: v.nullish(v.string()),
  language: v.nullish(v.string()),
  topics: v.nullish(v.array(v.string())),
  stargazers_count: v.nullish(v.number()),
  archived: v.nullish(v.boolean()),
  pushed_at: v.nullish(v.string()),
  updated_at: v.nullish(v.string()),
});

/** GitHub's owner and repository names, and an issue number, as GitHub allows them. */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
const NUMBER = /^[1-9]\d{0,9}$/;

/** What GitHub's statuses mean for one item an expand asks for. */
const EXPAND_STATUS_MEANINGS: Readonly<Record<number, StatusMeaning>> = {
  404: {
    means: "locator_unknown",
    says: "has no such issue or repository, or the token cannot see it",
  },
  410: { means: "locator_expired", says: "says the issue was deleted" },
};

/** A qualifier that already says issues or pull requests; GitHub requires one on issue search. */
const ISSUE_TYPE_QUALIFIER = /(?:^|\s)(?:is|type):(?:issue|pr|pull-request)(?:\s|$)/i;

type Listed = { candidates: WireCandidate[]; warnings: string[] };

export function githubAdapter(options: GithubOptions): SearchAdapter {
  const base = (options.baseUrl ?? GITHUB_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const kind = options.kind ?? "both";

  /** One search's answer, checked against `schema`. */
  async function get<S extends v.GenericSchema>(
    path: "repositories" | "issues",
    q: string,
    limit: number,
    schema: S,
    signal: AbortSignal,
  ): Promise<v.InferOutput<S>> {
    const up = upstream(`github search/${path}`, options);
    const params = new URLSearchParams({ q, per_page: String(limit) });
    const json = await callJson(
      up,
      `${base}/search/${path}?${params}`,
      {
        method: "GET",
        headers: {
          authorization: `Bearer ${options.token}`,
          accept: "application/vnd.github+json",
          "x-github-api-version": GITHUB_API_VERSION,
          "user-agent": GITHUB_USER_AGENT,
        },
      },
      signal,
      (refusal) => readGithubRefusal(refusal, up.now()),
    );
    return checkShape(up.label, json, schema);
  }

  async function repositories(query: string, limit: number, signal: AbortSignal) {
    const found = await get("repositories", query, limit, RepositorySearchSchema, signal);
    return listed(found.items.map(repositoryCandidate), found.incomplete_results, "repositories");
  }

  async function issues(query: string, limit: number, signal: AbortSignal) {
    const q = ISSUE_TYPE_QUALIFIER.test(query) ? query : `${query} is:issue`;
    const found = await get("issues", q, limit, IssueSearchSchema, signal);
    return listed(found.items.map(issueCandidate), found.incomplete_results, "issues");
  }

  const htmlHost = (options.htmlHost ?? "github.com").toLowerCase();
  const now = options.now ?? (() => Date.now());

  async function item<S extends v.GenericSchema>(
    path: string,
    schema: S,
    signal: AbortSignal,
  ): Promise<v.InferOutput<S>> {
    const up = upstream("github", options);
    const json = await callJson(
      up,
      `${base}${path}`,
      {
        method: "GET",
        headers: {
          authorization: `Bearer ${options.token}`,
          accept: "application/vnd.github+json",
          "x-github-api-version": GITHUB_API_VERSION,
          "user-agent": GITHUB_USER_AGENT,
        },
      },
      signal,
      (refusal) => {
        const meaning = EXPAND_STATUS_MEANINGS[refusal.status];
        return meaning ? { meaning, said: refusal.said } : readGithubRefusal(refusal, up.now());
      },
    );
    return checkShape(up.label, json, schema);
  }

  async function expand(
    { locator, revision }: ExpandRequest,
    signal: AbortSignal,
  ): Promise<Evidence> {
    const parts = githubLocator(locator, htmlHost);
    const retrieved_at = new Date(now()).toISOString();
    let evidence: Evidence;
    if (parts.number === null) {
      const r = await item(`/repos/${parts.owner}/${parts.repo}`, RepositoryDetailSchema, signal);
      const facts = [
        r.language ? `language: ${r.language}` : null,
        typeof r.stargazers_count === "number" ? `stars: ${r.stargazers_count}` : null,
        r.topics && r.topics.length > 0 ? `topics: ${r.topics.join(", ")}` : null,
        r.homepage ? `homepage: ${r.homepage}` : null,
        r.archived ? "archived" : null,
      ].filter((f) => f !== null);
      evidence = {
        title: r.full_name,
        text: [r.description ?? "", facts.join("\n")].filter((t) => t !== "").join("\n\n"),
        content_type: "text/plain",
        retrieved_at,
        ...(r.updated_at ? { revision: r.updated_at } : {}),
      };
    } else {
      const i = await item(
        `/repos/${parts.owner}/${parts.repo}/issues/${parts.number}`,
        IssueDetailSchema,
        signal,
      );
      evidence = {
        title: i.title,
        text: i.body ?? "",
        content_type: "text/markdown",
        retrieved_at,
        ...(i.updated_at ? { revision: i.updated_at } : {}),
      };
    }
    if (
      revision !== undefined && evidence.revision !== undefined && revision !== evidence.revision
    ) {
      throw new ProviderError(
        "locator_expired",
        `it changed since revision ${
          revision.slice(0, 32)
        } (now ${evidence.revision}); search again`,
      );
    }
    return evidence;
  }

  return {
    name: options.name ?? "github",
    scope: options.scope ?? "code",
    expand,
    async search({ query, limit }, signal): Promise<SearchAnswer> {
      if (kind === "repositories") return await repositories(query, limit, signal);
      if (kind === "issues") return await issues(query, limit, signal);
      const settled = await Promise.allSettled([
        repositories(query, limit, signal),
        issues(query, limit, signal),
      ]);
      const failures = settled.flatMap((s) => s.status === "rejected" ? [s.reason] : []);
      if (failures.length > 0) throw mostTelling(failures);
      const [repos, found] = settled.map((s) => (s as PromiseFulfilledResult<Listed>).value);
      return {
        candidates: interleave(repos?.candidates ?? [], found?.candidates ?? [], limit),
        warnings: [...(repos?.warnings ?? []), ...(found?.warnings ?? [])],
      };
    },
  };
}

/**
 * The parts of a locator of github's own shape: `https://{htmlHost}/{owner}/{repo}`, optionally
 * followed by `/issues/{n}` or `/pull/{n}`, with no credentials, port, query or fragment. Anything
 * else is `locator_unknown` and is never sent anywhere.
 */
export function githubLocator(
  locator: string,
  htmlHost = "github.com",
): { owner: string; repo: string; number: string | null } {
  const unknown = () =>
    new ProviderError(
      "locator_unknown",
      `a github locator is https://${htmlHost}/OWNER/REPO, optionally with /issues/N or /pull/N`,
    );
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    throw unknown();
  }
  if (
    url.protocol !== "https:" || url.hostname !== htmlHost || url.port !== "" ||
    url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== ""
  ) {
    throw unknown();
  }
  const segments = url.pathname.replace(/\/$/, "").split("/").slice(1);
  const [owner, repo, kind, number] = segments;
  const valid = owner !== undefined && OWNER.test(owner) && repo !== undefined &&
    REPO.test(repo) && repo !== "." && repo !== ".." &&
    (segments.length === 2 ||
      (segments.length === 4 && (kind === "issues" || kind === "pull") &&
        number !== undefined && NUMBER.test(number)));
  if (!valid) throw unknown();
  return { owner, repo, number: segments.length === 4 ? number as string : null };
}

function repositoryCandidate(r: v.InferOutput<typeof RepositorySchema>): WireCandidate {
  const metadata: Record<string, unknown> = { kind: "repository" };
  if (typeof r.stargazers_count === "number") metadata.stars = r.stargazers_count;
  if (typeof r.forks_count === "number") metadata.forks = r.forks_count;
  if (r.language) metadata.language = r.language;
  return {
    title: r.full_name,
    locator: r.html_url,
    snippet: r.description ?? null,
    published_at: r.pushed_at ?? r.updated_at ?? null,
    metadata,
  };
}

function issueCandidate(i: v.InferOutput<typeof IssueSchema>): WireCandidate {
  const metadata: Record<string, unknown> = {
    kind: i.pull_request ? "pull_request" : "issue",
  };
  const repository = /\/repos\/([^/]+\/[^/]+)$/.exec(i.repository_url ?? "")?.[1];
  if (repository) metadata.repository = repository;
  if (typeof i.number === "number") metadata.number = i.number;
  if (i.state) metadata.state = i.state;
  if (typeof i.comments === "number") metadata.comments = i.comments;
  return {
    title: i.title,
    locator: i.html_url,
    // The whole body: the core cuts it to the snippet bound and marks the cut.
    snippet: i.body?.trim() || null,
    published_at: i.created_at ?? null,
    metadata,
  };
}

function listed(
  candidates: WireCandidate[],
  incomplete: boolean | null | undefined,
  what: string,
): Listed {
  const warnings = incomplete
    ? [`GitHub's ${what} search hit its time limit; the results may be incomplete`]
    : [];
  return { candidates, warnings };
}

/** Alternates the two ranked lists (repository first) and keeps at most `limit`. */
export function interleave<T>(a: readonly T[], b: readonly T[], limit: number): T[] {
  const out: T[] = [];
  for (let i = 0; out.length < limit && (i < a.length || i < b.length); i++) {
    if (i < a.length) out.push(a[i] as T);
    if (i < b.length && out.length < limit) out.push(b[i] as T);
  }
  return out;
}

/** Of two failures, a rate limit (with the longer wait) says most about when to come back. */
function mostTelling(failures: unknown[]): unknown {
  const limited = failures.filter((f): f is ProviderError =>
    f instanceof ProviderError && f.code === "rate_limited"
  );
  if (limited.length === 0) return failures[0];
  return limited.reduce((a, b) => ((b.retryAfterMs ?? 0) > (a.retryAfterMs ?? 0) ? b : a));
}

/**
 * What GitHub's statuses mean beyond the common table. GitHub answers a rate limit with 403 or 429;
 * a 403 is one only when GitHub says so (Retry-After, `x-ratelimit-remaining: 0`, or a message
 * naming a rate limit), and otherwise, like a 401, means the token cannot be used: an operator must
 * act.
 */
const GITHUB_STATUSES: Readonly<
  Record<number, { limit: "always" | "when_said" | "never"; refused?: StatusMeaning }>
> = {
  401: {
    limit: "never",
    refused: { means: "access_refused", says: "rejected the token", hint: "check GITHUB_TOKEN" },
  },
  403: {
    limit: "when_said",
    refused: {
      means: "access_refused",
      says: "refused the token access",
      hint: "check GITHUB_TOKEN's permissions",
    },
  },
  429: { limit: "always" },
};

/** GitHub's error body (`message`), its rate-limit headers, and what its status means. */
function readGithubRefusal(
  { status, headers, body, wait: retryAfter }: Refusal,
  nowMs: number,
): RefusalReading {
  const parsed = v.safeParse(GithubErrorSchema, body);
  const message = parsed.success ? parsed.output.message : undefined;
  const said = quote(message);
  const known = GITHUB_STATUSES[status];
  if (known === undefined || known.limit === "never") return { meaning: known?.refused, said };
  const reset = numberHeader(headers, "x-ratelimit-reset");
  const wait = retryAfter ??
    (numberHeader(headers, "x-ratelimit-remaining") === 0 && reset !== null
      ? Math.max(0, Math.ceil(reset * 1000 - nowMs))
      : null) ??
    (known.limit === "always" || (typeof message === "string" && /rate limit/i.test(message))
      ? GITHUB_SECONDARY_LIMIT_WAIT_MS
      : null);
  if (wait !== null) return { meaning: { means: "rate_limit", retryAfterMs: wait }, said };
  return { meaning: known.refused, said };
}

/** The number a header holds, or null when it is absent or not a non-negative number. */
function numberHeader(headers: Headers, name: string): number | null {
  const raw = headers.get(name)?.trim();
  if (raw === undefined || !/^\d+(?:\.\d+)?$/.test(raw)) return null;
  return Number(raw);
}
