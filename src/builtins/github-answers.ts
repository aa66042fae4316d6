/**
 * GitHub's answers as the `github` built-in reads them: the shapes of its search and item answers
 * (loose objects: GitHub's items carry dozens of fields, and only what is mapped is checked), the
 * candidates they make, the locators of its own shape an expand accepts, and what GitHub's
 * statuses and rate-limit headers mean.
 */
import * as v from "valibot";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import { ProviderError } from "../protocol/provider-contract.ts";
import type { StatusMeaning } from "../transport/classify-status.ts";
import { quote, type Refusal, type RefusalReading } from "../transport/upstream.ts";

/**
 * GitHub's documented wait for a secondary rate limit that names no time: "wait for at least one
 * minute before retrying".
 */
const GITHUB_SECONDARY_LIMIT_WAIT_MS = 60_000;

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
export const RepositorySearchSchema = searchSchema(RepositorySchema);
export const IssueSearchSchema = searchSchema(IssueSchema);

const GithubErrorSchema = v.looseObject({ message: v.optional(v.unknown()) });

export const IssueDetailSchema = v.looseObject({
  title: v.string(),
  body: v.nullish(v.string()),
  updated_at: v.nullish(v.string()),
});

export const RepositoryDetailSchema = v.looseObject({
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
export const EXPAND_STATUS_MEANINGS: Readonly<Record<number, StatusMeaning>> = {
  404: {
    means: "locator_unknown",
    says: "has no such issue or repository, or the token cannot see it",
  },
  410: { means: "locator_expired", says: "says the issue was deleted" },
};

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

export function repositoryCandidate(r: v.InferOutput<typeof RepositorySchema>): WireCandidate {
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

export function issueCandidate(i: v.InferOutput<typeof IssueSchema>): WireCandidate {
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
export function readGithubRefusal(
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
