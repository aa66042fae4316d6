/**
 * What every answer of the route fuzz suites must be, whatever was asked or answered: never a 500
 * or an `internal_error`, JSON that is a valid envelope (schemas/envelope.json) whose HTTP status
 * is its code's row (src/envelope/code-table.ts), and nothing a caller must not see: no planted
 * secret (tests/support/fuzz-secrets.ts), no provider's address, no lone UTF-16 surrogate, neither
 * as a `\ud800`-style escape in the text nor in any string it parses to.
 */
import assert from "node:assert/strict";
import { CODES } from "../../src/envelope/code-table.ts";
import { assertEnvelope } from "./gateway.ts";
import { SECRETS } from "./fuzz-secrets.ts";
import { hasLoneSurrogateEscape, stringsOf, wellFormed } from "./fuzz-wire.ts";

export type Answer = { status: number; headers: Headers; text: string };

export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The usage errors a refused request may carry: exit 2, action fix_input (docs/envelope.md). */
export const INPUT_CODES = [
  "invalid_json",
  "invalid_utf8",
  "body_too_large",
  "unsupported_media_type",
  "unknown_field",
  "null_field",
  "invalid_field",
  "unknown_provider",
] as const;

/** What assertShown leaves out: what the caller planted itself, and a refusal may quote. */
export type ShownOptions = {
  /** Planted secrets (fuzz-secrets.ts) must not be shown; default true. */
  secrets?: boolean;
  /** Lone surrogates must not be shown; default true. */
  surrogates?: boolean;
};

/**
 * Nothing of what the caller reads shows a provider's address, a planted secret, or a lone
 * surrogate (as a `\ud800`-style escape in the text, or in any string it parses to). Returns the
 * parsed body (undefined for an empty one, the text for one that is not JSON).
 */
export function assertShown(
  answer: Answer,
  hosts: readonly string[],
  what: string,
  options: ShownOptions = {},
): unknown {
  const { text, headers } = answer;
  const headerText = [...headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const { secret } of options.secrets === false ? [] : SECRETS) {
    const at = text.indexOf(secret);
    assert.equal(
      at,
      -1,
      `${what}: "${secret}" reached the caller: ...${text.slice(Math.max(0, at - 200), at + 100)}`,
    );
    assert.equal(headerText.includes(secret), false, `${what}: "${secret}" reached a header`);
  }
  for (const host of hosts) {
    assert.equal(text.includes(host), false, `${what}: the address ${host} reached the caller`);
  }
  const surrogates = options.surrogates !== false;
  assert.ok(
    !surrogates || !hasLoneSurrogateEscape(text),
    `${what}: a lone surrogate escape reached the caller: ${text.slice(0, 600)}`,
  );
  if (text === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const bad = surrogates ? stringsOf(parsed).find((s) => !wellFormed(s)) : undefined;
  assert.equal(bad, undefined, `${what}: a lone surrogate reached the caller in ${bad}`);
  return parsed;
}

/**
 * The answer is an envelope of `command` (or of one of several), never a 500 or an
 * internal_error, its HTTP status its code's; returns it.
 */
export function assertEnvelopeAnswer(
  answer: Answer,
  command: string | readonly string[],
  what: string,
  // deno-lint-ignore no-explicit-any
): any {
  const { status, text } = answer;
  assert.notEqual(status, 500, `${what}: HTTP 500: ${text.slice(0, 600)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    assert.fail(`${what}: HTTP ${status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
  const envelope = assertEnvelope(parsed);
  assert.notEqual(envelope.code, "internal_error", `${what}: ${text.slice(0, 600)}`);
  const row = CODES[envelope.code as keyof typeof CODES];
  assert.equal(status, row.http, `${what}: ${envelope.code} sent as HTTP ${status}`);
  const commands = typeof command === "string" ? [command] : command;
  assert.ok(commands.includes(envelope.command), `${what}: command ${envelope.command}`);
  return envelope;
}
