/**
 * The assertions on one fuzzed search: a valid envelope, the healthy provider merged, a documented
 * outcome whose code sits in its row and matches what was sent, no candidates from a failed
 * attempt, every bound of docs/protocol.md on attempts and merged entries, and no planted secret or
 * provider address in what the caller reads.
 */
import assert from "node:assert/strict";
import { ATTEMPT_CODES, ATTEMPT_OUTCOMES } from "../../src/protocol/codes.ts";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_LOCATOR_CHARS,
  MAX_METADATA_ARRAY_ITEMS,
  MAX_METADATA_DEPTH,
  MAX_METADATA_KEY_CHARS,
  MAX_METADATA_KEYS,
  MAX_METADATA_STRING_CHARS,
  MAX_PROVIDER_WAIT_MS,
  MAX_PUBLISHED_AT_CHARS,
  MAX_SNIPPET_CHARS,
  MAX_TITLE_CHARS,
  MAX_WARNING_CHARS,
  MAX_WARNINGS,
} from "../../src/protocol/limits.ts";
import { POISON_KEYS } from "../../src/core/sanitize.ts";
import { SECRET_KEY } from "../../src/io/redact.ts";
import { validators } from "./gateway.ts";
import { assertProtocolWords, HEALTHY } from "./outcomes.ts";
import { FUZZED, HEALTHY_NAME } from "./fuzz-answer.ts";
import { type Expectation, expectationsOf, PROTOCOL } from "./fuzz-oracle.ts";
import { SECRETS } from "./fuzz-secrets.ts";
import type { Played } from "./fuzz-server.ts";

/** Which outcome each attempt code belongs to (src/protocol/codes.ts). */
const OUTCOME_OF: Record<string, string> = {
  ok: "success",
  timeout: "timeout",
  adapter_unavailable: "adapter_unavailable",
  dns_failure: "adapter_unavailable",
  connection_refused: "adapter_unavailable",
  connection_reset: "adapter_unavailable",
  tls_failure: "adapter_unavailable",
  search_failed: "search_failed",
  rate_limited: "search_failed",
  invalid_request: "search_failed",
  unsupported_action: "search_failed",
  connection_lost: "search_failed",
  body_too_large: PROTOCOL,
  search_budget_exceeded: PROTOCOL,
  invalid_encoding: PROTOCOL,
  invalid_utf8: PROTOCOL,
  invalid_json: PROTOCOL,
  schema_violation: PROTOCOL,
  identity_mismatch: PROTOCOL,
  redirect: PROTOCOL,
  wrong_content_type: PROTOCOL,
  interim_response: PROTOCOL,
  cancelled: "cancelled",
};

export type Exchange = { status: number; headers: Headers; text: string };

const points = (s: string) => Array.from(s).length;

// deno-lint-ignore no-explicit-any
type Loose = any;

/** Why an attempt is not what `e` says, or null when it is. */
function mismatch(e: Expectation, attempt: Loose): string | null {
  if (e.kind === "documented") return null;
  if (e.kind === "success") {
    if (attempt.outcome !== "success") return "expected success";
    return attempt.candidate_count === e.count ? null : `expected ${e.count} candidates`;
  }
  if (!e.outcomes.includes(attempt.outcome)) return `expected ${e.outcomes.join(" or ")}`;
  if (e.codes && !e.codes.includes(attempt.code)) return `expected code ${e.codes.join(" or ")}`;
  if (e.retryable !== undefined && attempt.retryable !== e.retryable) {
    return `expected retryable ${e.retryable}`;
  }
  return null;
}

/** Every candidate field inside its bound; metadata within keys, depth, strings and arrays. */
function assertCandidateBounds(c: Loose, where: string): void {
  assert.ok(
    points(c.title) <= MAX_TITLE_CHARS,
    `${where}: title of ${points(c.title)} code points`,
  );
  assert.ok(points(c.snippet ?? "") <= MAX_SNIPPET_CHARS, `${where}: snippet too long`);
  assert.ok(
    c.published_at === null || points(c.published_at) <= MAX_PUBLISHED_AT_CHARS,
    `${where}: published_at too long`,
  );
  assert.ok(points(c.locator) <= MAX_LOCATOR_CHARS, `${where}: locator too long`);
  if ("metadata" in c) assertMetadataBounds(c.metadata, `${where}.metadata`);
}

function assertMetadataBounds(root: unknown, where: string): void {
  assert.ok(
    typeof root === "object" && root !== null && !Array.isArray(root),
    `${where} is not an object: ${JSON.stringify(root)?.slice(0, 200)}`,
  );
  const visit = (value: unknown, path: string, depth: number): void => {
    if (typeof value === "string") {
      assert.ok(points(value) <= MAX_METADATA_STRING_CHARS, `${path}: string too long`);
      return;
    }
    if (typeof value === "number") {
      assert.ok(Number.isFinite(value), `${path}: ${value}`);
      return;
    }
    if (value === null || typeof value === "boolean") return;
    assert.ok(typeof value === "object", `${path}: ${typeof value}`);
    assert.ok(depth <= MAX_METADATA_DEPTH, `${path} nests deeper than ${MAX_METADATA_DEPTH}`);
    if (Array.isArray(value)) {
      assert.ok(value.length <= MAX_METADATA_ARRAY_ITEMS, `${path}: ${value.length} items`);
      value.forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1));
      return;
    }
    const keys = Object.keys(value);
    assert.ok(keys.length <= MAX_METADATA_KEYS, `${path}: ${keys.length} keys`);
    for (const key of keys) {
      assert.ok(key.length <= MAX_METADATA_KEY_CHARS, `${path}: a key of ${key.length} characters`);
      assert.ok(!POISON_KEYS.has(key), `${path}.${key} is a prototype key`);
      assert.ok(!SECRET_KEY.test(key), `${path}.${key} names a secret`);
      visit((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
    }
  };
  visit(root, where, 1);
}

/** Codes whose message the transport writes itself, about what the network or a deadline did. */
const NETWORK_CODES = new Set([
  "connection_lost",
  "connection_reset",
  "connection_refused",
  "dns_failure",
  "tls_failure",
  "timeout",
]);

/** The strings a caller reads as diagnostics or metadata: messages, warnings, errors, metadata. */
function diagnosticStrings(envelope: unknown): string[] {
  const out: string[] = [];
  const DIAGNOSTIC = new Set(["message", "warnings", "error", "metadata"]);
  const walk = (value: unknown, inside: boolean): void => {
    if (typeof value === "string") {
      if (inside) out.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, inside);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (inside) out.push(key);
        walk(child, inside || DIAGNOSTIC.has(key));
      }
    }
  };
  walk(envelope, false);
  return out;
}

/**
 * Everything one search must satisfy whatever the fuzzed provider sent: a valid envelope, the
 * healthy provider merged, a documented outcome that matches what was sent, every bound, no leak.
 */
export function assertSearch(
  played: Played,
  exchange: Exchange,
  hosts: readonly string[],
  runtime: string,
): void {
  const a = played.answer;
  const { status, text, headers } = exchange;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    assert.fail(
      `the gateway answered HTTP ${status} with something that is not JSON: ${text.slice(0, 300)}`,
    );
  }
  assert.ok(
    validators.envelope(parsed),
    `not a valid envelope: ${JSON.stringify(validators.envelope.errors)}\n${text.slice(0, 1_500)}`,
  );
  const envelope: Loose = parsed;
  assert.equal(status, 200, `HTTP ${status}: ${text.slice(0, 500)}`);
  assert.ok(envelope.code === "ok" || envelope.code === "partial", `code ${envelope.code}`);
  const attempts: Loose[] = envelope.result.candidates;
  assert.deepEqual(attempts.map((x) => x.provider).sort(), [FUZZED, HEALTHY_NAME]);
  const fuzzed = attempts.find((x) => x.provider === FUZZED);
  const healthy = attempts.find((x) => x.provider === HEALTHY_NAME);
  const shown = JSON.stringify(fuzzed).slice(0, 600);
  assert.ok(played.requested, `the fuzzed provider was never asked: ${shown}`);

  // The healthy provider is untouched by its neighbour.
  assert.equal(healthy.outcome, "success", `healthy: ${JSON.stringify(healthy).slice(0, 400)}`);
  assert.equal(healthy.candidate_count, 1);
  assert.ok(
    envelope.result.merged.some((m: Loose) =>
      m.found_by.includes(HEALTHY_NAME) && m.locator === HEALTHY.locator
    ),
    "the healthy provider's result is not in merged",
  );

  // A documented outcome, its code in the same row, and what was sent decides which.
  assert.ok((ATTEMPT_OUTCOMES as readonly string[]).includes(fuzzed.outcome), shown);
  assert.ok((ATTEMPT_CODES as readonly string[]).includes(fuzzed.code), shown);
  const row = OUTCOME_OF[fuzzed.code];
  if (row !== undefined) {
    assert.equal(fuzzed.outcome, row, `code ${fuzzed.code} under ${fuzzed.outcome}`);
  }
  assert.ok(fuzzed.outcome !== "skipped" && fuzzed.outcome !== "cancelled", shown);
  assert.equal(envelope.code, fuzzed.outcome === "success" ? "ok" : "partial");
  const expected = expectationsOf(played, runtime);
  const problems = expected.map((e) => mismatch(e, fuzzed)).filter((p) => p !== null);
  assert.ok(problems.length < expected.length, `${problems.join("; or ")}, got ${shown}`);
  if (fuzzed.outcome === "timeout") assert.ok(fuzzed.budget !== undefined, shown);

  // A failed attempt contributes nothing.
  if (fuzzed.outcome === "success") {
    assert.equal(fuzzed.candidates.length, fuzzed.candidate_count);
  } else {
    assert.equal("candidates" in fuzzed, false, `a failed attempt carries candidates: ${shown}`);
    assert.equal(fuzzed.candidate_count, 0);
    assert.ok(
      envelope.result.merged.every((m: Loose) => !m.found_by.includes(FUZZED)),
      "a failed attempt's candidates were merged",
    );
  }

  // Every bound.
  assert.ok(envelope.result.merged.length <= a.limit, `${envelope.result.merged.length} merged`);
  for (const attempt of attempts) {
    const where = attempt.provider;
    assert.ok(
      attempt.candidate_count <= a.limit,
      `${where}: ${attempt.candidate_count} candidates`,
    );
    assert.ok(
      attempt.warnings.length <= MAX_WARNINGS,
      `${where}: ${attempt.warnings.length} warnings`,
    );
    for (const w of attempt.warnings) {
      assert.ok(points(w) <= MAX_WARNING_CHARS, `${where}: a warning of ${points(w)} code points`);
    }
    assert.ok(points(attempt.message) <= MAX_DIAGNOSTIC_CHARS, `${where}: message too long`);
    // The gateway's own words for what the network did (a provider's error body may say anything).
    if (NETWORK_CODES.has(attempt.code)) assertProtocolWords(attempt.message);
    if (attempt.retry_after_ms !== undefined) {
      assert.ok(
        Number.isSafeInteger(attempt.retry_after_ms) && attempt.retry_after_ms >= 0 &&
          attempt.retry_after_ms <= MAX_PROVIDER_WAIT_MS,
        `${where}: retry_after_ms ${attempt.retry_after_ms} is not a wait of at most one hour`,
      );
    }
    (attempt.candidates ?? []).forEach((c: Loose, i: number) =>
      assertCandidateBounds(c, `${where}[${i}]`)
    );
  }
  envelope.result.merged.forEach((m: Loose, i: number) => assertCandidateBounds(m, `merged[${i}]`));
  if (envelope.retry_after_ms !== undefined) {
    assert.ok(
      envelope.retry_after_ms <= MAX_PROVIDER_WAIT_MS,
      `retry_after_ms ${envelope.retry_after_ms}`,
    );
  }

  // No planted secret in a diagnostic, in metadata or in a header; no provider address anywhere.
  const diagnostics = diagnosticStrings(envelope);
  const headerText = [...headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const { secret } of SECRETS) {
    const leak = diagnostics.find((s) => s.includes(secret));
    assert.equal(leak, undefined, `"${secret}" reached the caller in: ${leak?.slice(0, 400)}`);
    assert.equal(headerText.includes(secret), false, `"${secret}" reached a response header`);
  }
  for (const host of hosts) assert.equal(text.includes(host), false, `the address ${host} leaked`);
}
