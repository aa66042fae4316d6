/**
 * The provider-outcome matrix's fixture: one faulty provider next to one healthy provider, searched
 * through a real gateway, with the assertions every failed attempt must satisfy.
 */
import assert from "node:assert/strict";
import { gateway, search, type TestGateway } from "./gateway.ts";
import { answer, type Handler, startServer } from "./servers.ts";

/** A value faulty providers send in headers and bodies; it must never reach a caller. */
export const SECRET = "zq-upstream-leak-4711";

/** Headers every faulty provider adds, so each case also proves provider headers are not echoed. */
export const LEAKY_HEADERS: Record<string, string> = {
  "x-upstream-secret": SECRET,
  "set-cookie": `session=${SECRET}`,
};

export const HEALTHY = {
  title: "Healthy result",
  locator: "https://healthy.example/1",
  snippet: "intact",
  published_at: "2025-01-01",
  metadata: { stars: 7 },
};

export type FaultyRun = Awaited<ReturnType<typeof faultySearch>>;

/**
 * Searches [faulty, healthy] and returns the envelope with both attempts. `faulty` is a handler
 * for a fresh server, or a fixed endpoint (for a refused port or an unresolvable host).
 */
export async function faultySearch(
  faulty: Handler | { endpoint: string },
  options: {
    entry?: Record<string, unknown>;
    params?: Record<string, string>;
    config?: TestGateway;
  } = {},
) {
  const good = await startServer(answer("healthy", "healthy", [HEALTHY]));
  const bad = typeof faulty === "function" ? await startServer(faulty) : null;
  try {
    const endpoint = bad === null ? (faulty as { endpoint: string }).endpoint : bad.url;
    const app = gateway(
      [
        { name: "faulty", endpoint, timeout_seconds: 2, ...options.entry },
        { name: "healthy", endpoint: good.url },
      ],
      options.config,
    );
    const started = performance.now();
    const out = await search(app, options.params);
    const elapsed = performance.now() - started;
    const [attempt, healthy] = out.body.result.candidates;
    return {
      ...out,
      elapsed,
      attempt,
      healthy,
      endpoint,
      requests: bad?.requests ?? [],
    };
  } finally {
    await bad?.close();
    await good.close();
  }
}

export type Expected = {
  outcome: string;
  code: string;
  retryable: boolean;
  budget?: string;
  retry_after_ms?: number;
};

/** The faulty attempt failed exactly as expected and the healthy provider's answer is intact. */
export function assertFailed(run: FaultyRun, expected: Expected): void {
  const { res, body, attempt } = run;
  assert.equal(res.status, 200);
  assert.equal(body.code, "partial");
  assert.equal(body.exit_code, 0);
  assert.equal(body.ok, true);
  assert.equal(body.action, "none");
  assert.equal(body.result.coverage, "degraded");
  assert.equal(body.result.candidates.length, 2);
  assert.equal(attempt.provider, "faulty");
  assert.deepEqual(
    {
      outcome: attempt.outcome,
      code: attempt.code,
      retryable: attempt.retryable,
      budget: attempt.budget,
      retry_after_ms: attempt.retry_after_ms,
    },
    { budget: undefined, retry_after_ms: undefined, ...expected },
    `attempt was ${JSON.stringify(attempt)}`,
  );
  assert.equal("candidates" in attempt, false, "a failed attempt carries no candidates field");
  assert.equal(attempt.candidate_count, 0);
  assert.deepEqual(attempt.warnings, []);
  assert.equal(typeof attempt.message, "string");
  assert.ok(attempt.message.length > 0 && attempt.message.length <= 320);
  assertProtocolWords(attempt.message);
  assertHealthyIntact(run);
  assertNoLeak(run);
}

/**
 * A runtime's own names for a failure: undici's UND_ERR_* codes, system error codes (ECONNRESET,
 * ENOTFOUND, EPIPE), and error classes (TypeError, AbortError, DOMException).
 */
export const RUNTIME_INTERNALS =
  /\bUND_ERR_\w+|\bE[A-Z]{3,}\b|\b(?:Type|Range|Abort|Reference)Error\b|\bDOMException\b|\bERR_[A-Z_]+/;

/** A failure's message speaks the protocol's words, never a runtime's. */
export function assertProtocolWords(message: string): void {
  assert.doesNotMatch(message, RUNTIME_INTERNALS, `a runtime's internals in "${message}"`);
}

export function assertHealthyIntact(run: FaultyRun): void {
  const { body, healthy } = run;
  assert.equal(healthy.provider, "healthy");
  assert.equal(healthy.outcome, "success");
  assert.equal(healthy.code, "ok");
  assert.equal(healthy.candidate_count, 1);
  assert.equal(body.result.merged.length, 1);
  const [entry] = body.result.merged;
  assert.deepEqual(
    {
      locator: entry.locator,
      title: entry.title,
      snippet: entry.snippet,
      published_at: entry.published_at,
      found_by: entry.found_by,
      found_in: entry.found_in,
      rank: entry.rank,
    },
    {
      locator: HEALTHY.locator,
      title: HEALTHY.title,
      snippet: HEALTHY.snippet,
      published_at: HEALTHY.published_at,
      found_by: ["healthy"],
      found_in: [{ candidate: 1, citation: 0 }],
      rank: 1,
    },
  );
  assert.deepEqual({ ...healthy.candidates[0].metadata }, HEALTHY.metadata);
}

/** Neither the provider's secret nor the endpoint's host and port reach the caller. */
export function assertNoLeak(run: FaultyRun, secrets: string[] = [SECRET]): void {
  const headers = [...run.res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const secret of secrets) {
    assert.equal(run.text.includes(secret), false, `"${secret}" leaked into the body`);
    assert.equal(headers.includes(secret), false, `"${secret}" leaked into a header`);
  }
  const hostPort = new URL(run.endpoint).host;
  assert.equal(run.text.includes(hostPort), false, `the endpoint ${hostPort} leaked`);
}

/** A valid provider answer for `name` with the given candidates (and extra top-level fields). */
export function responseBody(
  name: string,
  candidates: unknown[],
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    schema_version: "tracefetch.provider-response.v1",
    provider: name,
    scope: name,
    candidates,
    warnings: [],
    ...extra,
  });
}
