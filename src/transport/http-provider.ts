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
import { decodeUtf8, readBounded } from "./bounded-reader.ts";
import { classifyStatus, classifyThrown, parseRetryAfter, protocolError } from "./classify.ts";
import type { ProviderCall, ProviderClient, TransportResult } from "./provider-client.ts";
import { parseJson } from "../protocol/json-value.ts";

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

export function httpProvider(options: HttpProviderOptions): ProviderClient {
  return { call: (call) => callHttp(options, call) };
}

async function callHttp(o: HttpProviderOptions, call: ProviderCall): Promise<TransportResult> {
  const { signal } = call;
  const request: ProviderRequest = {
    schema_version: PROVIDER_REQUEST_VERSION,
    action: "search",
    query: call.query,
    limit: call.limit,
  };
  let response: Response;
  let release: (() => void) | null = null;
  try {
    const extra = o.headers ? await o.headers() : {};
    // Queued time counts against the attempt's deadline: the signal already carries it.
    release = call.connectGate ? await call.connectGate.acquire(signal) : null;
    response = await o.fetch(o.endpoint, {
      method: "POST",
      headers: {
        ...extra,
        ...call.headers,
        "content-type": "application/json",
        accept: "application/json",
        "x-request-id": call.requestId,
        traceparent: call.traceparent,
      },
      body: JSON.stringify(request),
      redirect: "manual",
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
    await response.body?.cancel().catch(() => {});
    return fail(classifyThrown(error, "body", signal));
  }
}

async function readAnswer(
  o: HttpProviderOptions,
  call: ProviderCall,
  response: Response,
): Promise<TransportResult> {
  // A redirect is never followed: the gateway calls only URLs from the manifest.
  if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
    await response.body?.cancel().catch(() => {});
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
    await response.body?.cancel().catch(() => {});
    return fail(
      protocolError(
        "interim_response",
        `the provider's answer ended at an informational status (HTTP ${response.status}), which carries no answer`,
      ),
    );
  }
  if (!response.ok) {
    // The status is the answer: an error body that cannot be read (cut off, not decodable) counts
    // as no body. Only a deadline or a departed caller outranks the status.
    const read = await readBounded(response.body, MAX_ERROR_BODY_BYTES, call.budget).catch(
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
        parseRetryAfter(response.headers.get("retry-after"), o.now()),
      ),
    );
  }
  // 204 and 205 carry no body by definition, and a provider's answer is a body.
  if (response.status === 204 || response.status === 205) {
    await response.body?.cancel().catch(() => {});
    return fail(
      protocolError(
        "invalid_json",
        `the provider answered HTTP ${response.status}, which has no body`,
      ),
    );
  }
  const type = response.headers.get("content-type") ?? "";
  if (!JSON_CONTENT_TYPE.test(type)) {
    await response.body?.cancel().catch(() => {});
    return fail(
      protocolError(
        "wrong_content_type",
        `the provider answered content-type "${type}", not application/json`,
      ),
    );
  }
  const read = await readBounded(response.body, MAX_PROVIDER_BODY_BYTES, call.budget);
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
