/**
 * readAnswer: the one reader of an answer's body, for a provider over HTTP (search and every
 * action) and for the upstream helper's third-party API. It walks the status ladder once: a
 * redirect or an interim status is unusable, a non-2xx status is a refusal with whatever error
 * body could be read, and a 2xx must be JSON by its content type, within its cap (and the
 * search's byte budget), strict UTF-8 and parseable. Each caller words the result its own way:
 * the HTTP client as protocol errors and status failures, the upstream helper as ProviderErrors.
 */
import type { AttemptCode } from "../protocol/codes.ts";
import { MAX_ERROR_BODY_BYTES, MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import { parseJson } from "../protocol/json-value.ts";
import { JSON_CONTENT_TYPE } from "../protocol/provider-wire.ts";
import type { ByteBudget } from "../io/byte-budget.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";
import type { ProviderAnswer } from "../io/provider-exchange.ts";

/** Why a 2xx (or a status that is no answer) cannot be used; each is an attempt code. */
export type UnusableCode = Extract<
  AttemptCode,
  | "redirect"
  | "interim_response"
  | "invalid_json"
  | "wrong_content_type"
  | "body_too_large"
  | "search_budget_exceeded"
  | "invalid_utf8"
>;

export type AnswerRead =
  /** A 2xx answer's body, parsed. */
  | { kind: "json"; json: unknown }
  /** A non-2xx status; `body` is its error body parsed as JSON, null when there was none to read. */
  | { kind: "refused"; status: number; body: unknown }
  | {
    kind: "unusable";
    code: UnusableCode;
    status: number;
    /** The content type, for a caller that quotes it. */
    contentType: string;
    /** What went wrong, in the provider protocol's words. */
    message: string;
  };

export type ReadOptions = {
  /** The search's remaining bytes, charged as the body is read; null: only the cap bounds it. */
  budget: ByteBudget | null;
  /** Decoded bytes of a 2xx body read at most. */
  cap?: number;
  /** The caller's deadline or departure: only it outranks a status whose error body broke off. */
  signal: AbortSignal;
};

/**
 * Errors while the body is read (a reset, an abort) propagate, for the caller to classify; the
 * body is given up before anything unusable is returned.
 */
export async function readAnswer(
  answer: ProviderAnswer,
  options: ReadOptions,
): Promise<AnswerRead> {
  const { status } = answer;
  const contentType = answer.header("content-type") ?? "";
  // A redirect is never followed: only URLs from the manifest or the settings are called.
  if (answer.opaqueRedirect || (status >= 300 && status < 400)) {
    return await givenUp(
      answer,
      contentType,
      "redirect",
      `the provider answered a redirect (HTTP ${status}), which is never followed`,
    );
  }
  // A runtime whose client hands over an interim 1xx as the answer (workerd does) has lost the
  // final one; nothing usable can follow on this exchange.
  if (status < 200) {
    return await givenUp(
      answer,
      contentType,
      "interim_response",
      `the provider's answer ended at an informational status (HTTP ${status}), which carries no answer`,
    );
  }
  if (status >= 300) return { kind: "refused", status, body: await errorBody(answer, options) };
  // 204 and 205 carry no body by definition, and an answer is a body.
  if (status === 204 || status === 205) {
    return await givenUp(
      answer,
      contentType,
      "invalid_json",
      `the provider answered HTTP ${status}, which has no body`,
    );
  }
  if (!JSON_CONTENT_TYPE.test(contentType)) {
    return await givenUp(
      answer,
      contentType,
      "wrong_content_type",
      `the provider answered content-type "${contentType}", not application/json`,
    );
  }
  const cap = options.cap ?? MAX_PROVIDER_BODY_BYTES;
  const read = await answer.read(cap, options.budget);
  if (!read.ok) {
    const message = read.reason === "too_large"
      ? `the body passed ${cap} decoded bytes and was cancelled`
      : "the search's decoded-byte budget ran out while reading this body";
    const code = read.reason === "too_large" ? "body_too_large" : "search_budget_exceeded";
    return { kind: "unusable", code, status, contentType, message };
  }
  const text = decodeUtf8(read.bytes);
  if (text === null) {
    return {
      kind: "unusable",
      code: "invalid_utf8",
      status,
      contentType,
      message: "the body is not valid UTF-8",
    };
  }
  const json = parseJson(text);
  if (json === undefined) {
    return {
      kind: "unusable",
      code: "invalid_json",
      status,
      contentType,
      message: "the body is not JSON",
    };
  }
  return { kind: "json", json };
}

/** An answer that cannot be used, once its body was given up. */
async function givenUp(
  answer: ProviderAnswer,
  contentType: string,
  code: UnusableCode,
  message: string,
): Promise<AnswerRead> {
  await answer.cancel();
  return { kind: "unusable", code, status: answer.status, contentType, message };
}

/**
 * A refusal's body, read up to the error cap: the status is the answer, so a body that cannot be
 * read (cut off, too large, not decodable, not JSON) counts as none. Only a deadline or a departed
 * caller outranks the status.
 */
async function errorBody(answer: ProviderAnswer, options: ReadOptions): Promise<unknown> {
  let read;
  try {
    read = await answer.read(MAX_ERROR_BODY_BYTES, options.budget);
  } catch (error) {
    if (options.signal.aborted) throw error;
    return null;
  }
  const text = read.ok ? decodeUtf8(read.bytes) : null;
  return text === null ? null : parseJson(text) ?? null;
}
