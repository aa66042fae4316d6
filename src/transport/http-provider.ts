/**
 * A remote provider over the HTTP provider protocol (docs/protocol.md): one POST, no redirects, a
 * bounded body, strict UTF-8, strict schema, and the identity check.
 */
import { checkProviderAnswer } from "../protocol/check-provider-answer.ts";
import { MAX_ERROR_BODY_BYTES, MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import {
  PROVIDER_REQUEST_VERSION,
  type ProviderRequest,
  readProviderError,
} from "../protocol/provider-wire.ts";
import type { AttemptCode } from "../protocol/codes.ts";
import { actionRequest, type OptionalAction } from "../protocol/provider-actions.ts";
import { decodeUtf8 } from "./bounded-reader.ts";
import {
  classifyActionStatus,
  classifyStatus,
  classifyThrown,
  parseRetryAfter,
  protocolError,
} from "./classify.ts";
import type {
  ActionCall,
  ActionResult,
  DescribeResult,
  ProviderCall,
  ProviderClient,
  TransportResult,
} from "./provider-client.ts";
import { parseJson } from "../protocol/json-value.ts";
import { type Settled, settleJson } from "./action-answers.ts";
import { type ProviderAnswer, type ProviderPost, providerPostOf } from "./provider-post.ts";

export { MAX_ERROR_BODY_BYTES } from "../protocol/limits.ts";

/** What a provider's answer must be labelled: application/json or a +json type. */
export const JSON_CONTENT_TYPE = /^application\/(?:[a-z0-9.+-]*\+)?json\s*(?:;|$)/i;

export type HttpProviderOptions = {
  name: string;
  scope: string;
  endpoint: string;
  /** Extra headers (authorization for bearer or gateway-token providers). */
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  fetch: typeof fetch;
  now: () => number;
};

/** The options and the exchange they resolve to, once per client. */
type Resolved = HttpProviderOptions & { post: ProviderPost };

export function httpProvider(options: HttpProviderOptions): ProviderClient {
  const o: Resolved = { ...options, post: providerPostOf(options.fetch) };
  return {
    call: (call) => callHttp(o, call),
    describe: async (call) => describeResult(await callAction(o, "describe", call)),
    health: (call) => callAction(o, "health", call),
    expand: (request, call) => callAction(o, "expand", call, request),
    refresh: (call) => callAction(o, "refresh", call),
  };
}

/** What a describe call found wrong with a complete answer: it makes the provider search-only. */
type Problem = { kind: "problem"; code: AttemptCode; message: string };

/**
 * One action call: the same endpoint, headers, redirect refusal, bounded reader and strict UTF-8
 * as a search; a non-2xx answer read by classifyActionStatus.
 */
async function callAction<A extends OptionalAction>(
  o: Resolved,
  action: A,
  call: ActionCall,
  expand?: { locator: string; revision?: string | undefined },
): Promise<ActionResult<Settled[A]>> {
  const result = await exchangeAction(o, action, call, expand);
  return result.kind === "problem"
    ? { kind: "failure", ...protocolError(result.code, result.message) }
    : result;
}

/** A describe answer that is complete but unusable is `invalid`, not a failure to retry. */
function describeResult(result: ActionResult<Settled["describe"]>): DescribeResult {
  if (result.kind === "failure" && result.outcome === "provider_protocol_error") {
    return { kind: "invalid", message: result.message };
  }
  return result;
}

async function exchangeAction<A extends OptionalAction>(
  o: Resolved,
  action: A,
  call: ActionCall,
  expand?: { locator: string; revision?: string | undefined },
): Promise<ActionResult<Settled[A]> | Problem> {
  const { signal } = call;
  let response: ProviderAnswer;
  try {
    const extra = o.headers ? await o.headers() : {};
    response = await o.post(o.endpoint, {
      headers: {
        ...extra,
        ...call.headers,
        "content-type": "application/json",
        accept: "application/json",
        ...(call.requestId === undefined ? {} : { "x-request-id": call.requestId }),
        ...(call.traceparent === undefined ? {} : { traceparent: call.traceparent }),
      },
      body: JSON.stringify(actionRequest(action, expand)),
      signal,
    });
  } catch (error) {
    return { kind: "failure", ...classifyThrown(error, "connect", signal) };
  }
  try {
    if (response.opaqueRedirect || (response.status >= 300 && response.status < 400)) {
      await response.cancel();
      return problem(
        "redirect",
        `the provider answered a redirect (HTTP ${response.status}), which is never followed`,
      );
    }
    if (response.status < 200) {
      await response.cancel();
      return problem(
        "interim_response",
        `the provider's answer ended at an informational status (HTTP ${response.status})`,
      );
    }
    if (response.status >= 300) {
      const read = await response.read(MAX_ERROR_BODY_BYTES, null).catch(
        (error: unknown) => {
          if (signal.aborted) throw error;
          return null;
        },
      );
      const text = read?.ok ? decodeUtf8(read.bytes) : null;
      const body = text === null ? null : readProviderError(parseJson(text));
      const refused = classifyActionStatus(
        action,
        response.status,
        body,
        parseRetryAfter(response.header("retry-after"), o.now()),
      );
      return "kind" in refused ? refused : { kind: "failure", ...refused };
    }
    const type = response.header("content-type") ?? "";
    if (response.status === 204 || response.status === 205 || !JSON_CONTENT_TYPE.test(type)) {
      await response.cancel();
      return problem(
        "wrong_content_type",
        `the provider answered HTTP ${response.status} with content-type "${type}", not application/json`,
      );
    }
    const read = await response.read(MAX_PROVIDER_BODY_BYTES, null);
    if (!read.ok) {
      return problem(
        "body_too_large",
        `the body passed ${MAX_PROVIDER_BODY_BYTES} decoded bytes and was cancelled`,
      );
    }
    const text = decodeUtf8(read.bytes);
    if (text === null) return problem("invalid_utf8", "the body is not valid UTF-8");
    const json = parseJson(text);
    if (json === undefined) return problem("invalid_json", "the body is not JSON");
    return settleJson(action, json, { name: o.name, scope: o.scope }, expand?.locator);
  } catch (error) {
    await response.cancel();
    return { kind: "failure", ...classifyThrown(error, "body", signal) };
  }
}

function problem(code: AttemptCode, message: string): Problem {
  return { kind: "problem", code, message };
}

async function callHttp(o: Resolved, call: ProviderCall): Promise<TransportResult> {
  const { signal } = call;
  const request: ProviderRequest = {
    schema_version: PROVIDER_REQUEST_VERSION,
    action: "search",
    query: call.query,
    limit: call.limit,
    ...(call.filters === undefined ? {} : { filters: call.filters }),
  };
  let response: ProviderAnswer;
  let release: (() => void) | null = null;
  try {
    const extra = o.headers ? await o.headers() : {};
    // Queued time counts against the attempt's deadline: the signal already carries it.
    release = call.connectGate ? await call.connectGate.acquire(signal) : null;
    response = await o.post(o.endpoint, {
      headers: {
        ...extra,
        ...call.headers,
        "content-type": "application/json",
        accept: "application/json",
        "x-request-id": call.requestId,
        traceparent: call.traceparent,
      },
      body: JSON.stringify(request),
      signal,
    });
  } catch (error) {
    return fail(classifyThrown(error, "connect", signal));
  } finally {
    release?.();
  }
  try {
    return await readAnswer(o, call, response);
  } catch (error) {
    await response.cancel();
    return fail(classifyThrown(error, "body", signal));
  }
}

async function readAnswer(
  o: Resolved,
  call: ProviderCall,
  response: ProviderAnswer,
): Promise<TransportResult> {
  // A redirect is never followed: the gateway calls only URLs from the manifest.
  if (response.opaqueRedirect || (response.status >= 300 && response.status < 400)) {
    await response.cancel();
    return fail(
      protocolError(
        "redirect",
        `the provider answered a redirect (HTTP ${response.status}), which is never followed`,
      ),
    );
  }
  // A runtime whose client hands over an interim 1xx as the answer (workerd does) has lost the
  // final one; nothing usable can follow on this exchange.
  if (response.status < 200) {
    await response.cancel();
    return fail(
      protocolError(
        "interim_response",
        `the provider's answer ended at an informational status (HTTP ${response.status}), which carries no answer`,
      ),
    );
  }
  if (response.status >= 300) {
    // The status is the answer: an error body that cannot be read (cut off, not decodable) counts
    // as no body. Only a deadline or a departed caller outranks the status.
    const read = await response.read(MAX_ERROR_BODY_BYTES, call.budget).catch(
      (error: unknown) => {
        if (call.signal.aborted) throw error;
        return null;
      },
    );
    const text = read?.ok ? decodeUtf8(read.bytes) : null;
    const body = text === null ? null : readProviderError(parseJson(text));
    return fail(
      classifyStatus(
        response.status,
        body,
        parseRetryAfter(response.header("retry-after"), o.now()),
      ),
    );
  }
  // 204 and 205 carry no body by definition, and a provider's answer is a body.
  if (response.status === 204 || response.status === 205) {
    await response.cancel();
    return fail(
      protocolError(
        "invalid_json",
        `the provider answered HTTP ${response.status}, which has no body`,
      ),
    );
  }
  const type = response.header("content-type") ?? "";
  if (!JSON_CONTENT_TYPE.test(type)) {
    await response.cancel();
    return fail(
      protocolError(
        "wrong_content_type",
        `the provider answered content-type "${type}", not application/json`,
      ),
    );
  }
  const read = await response.read(MAX_PROVIDER_BODY_BYTES, call.budget);
  if (!read.ok) {
    return read.reason === "too_large"
      ? fail(
        protocolError(
          "body_too_large",
          `the body passed ${MAX_PROVIDER_BODY_BYTES} decoded bytes and was cancelled`,
        ),
      )
      : fail(
        protocolError(
          "search_budget_exceeded",
          "the search's decoded-byte budget ran out while reading this body",
        ),
      );
  }
  const checked = checkProviderAnswer(decodeUtf8(read.bytes), { name: o.name, scope: o.scope });
  if (!checked.ok) return fail(protocolError(checked.code, checked.message));
  const { answer } = checked;
  return { kind: "answer", candidates: answer.candidates, warnings: answer.warnings ?? [] };
}

function fail(failure: ReturnType<typeof protocolError>): TransportResult {
  return { kind: "failure", ...failure };
}
