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
import { callJson, checkShape, upstream } from "../transport/upstream.ts";
import {
  EXPAND_STATUS_MEANINGS,
  githubLocator,
  issueCandidate,
  IssueDetailSchema,
  IssueSearchSchema,
  readGithubRefusal,
  repositoryCandidate,
  RepositoryDetailSchema,
  RepositorySearchSchema,
} from "./github-answers.ts";

export const GITHUB_DEFAULT_BASE_URL = "https://api.github.com";

/** The REST API version whose search answers github-answers.ts describes. */
const GITHUB_API_VERSION = "2022-11-28";

/** GitHub refuses requests without a User-Agent; it names us so GitHub can contact the operator. */
const GITHUB_USER_AGENT = "tracefetch-edge";

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

/** A qualifier that already says issues or pull requests; GitHub requires one on issue search. */
const ISSUE_TYPE_QUALIFIER = /(?:^|\s)(?:is|type):(?:issue|pr|pull-request)(?:\s|$)/i;

type Listed = { candidates: WireCandidate[]; warnings: string[] };

export function githubAdapter(options: GithubOptions): SearchAdapter {
  const base = (options.baseUrl ?? GITHUB_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const kind = options.kind ?? "both";
  const request = {
    method: "GET" as const,
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": GITHUB_API_VERSION,
      "user-agent": GITHUB_USER_AGENT,
    },
  };

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
      request,
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
      request,
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
function interleave<T>(a: readonly T[], b: readonly T[], limit: number): T[] {
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
