/**
 * serveProvider(adapter, options): exposes any in-process provider over the HTTP provider protocol
 * (docs/protocol.md) as a Hono app. One contract, two transports: the adapter a built-in runs in
 * process is the same one served here, and a ProviderError it throws reaches the gateway as the
 * same attempt (code, retryable, wait) either way.
 */
import { Hono } from "hono/tiny";
import { bodyLimit } from "hono/body-limit";
import * as v from "valibot";
import { MAX_PROVIDER_REQUEST_BYTES, MAX_WARNING_CHARS, MAX_WARNINGS } from "../protocol/limits.ts";
import { ProviderError, type SearchAdapter } from "../protocol/provider-contract.ts";
import {
  PROVIDER_ERROR_STATUS,
  PROVIDER_ERROR_VERSION,
  PROVIDER_RESPONSE_VERSION,
  type ProviderErrorBody,
  ProviderRequestSchema,
  type ProviderResponse,
} from "../protocol/provider-wire.ts";
import { redact } from "../transport/redact.ts";
import { parseJson } from "../protocol/json-value.ts";
import { decodeUtf8 } from "../transport/bounded-reader.ts";

export type ServeProviderOptions = {
  /**
   * Runs before the body is read, for every POST (e.g. a gateway-token check): a Response refuses
   * the request and is answered as is; null lets it through. It must not consume the body. A hook
   * that throws refuses too (fail closed).
   */
  verify?: (request: Request) => Promise<Response | null>;
};

export function serveProvider(adapter: SearchAdapter, options: ServeProviderOptions = {}): Hono {
  const app = new Hono();
  const { verify } = options;

  app.post(
    "*",
    async (c, next) => {
      const refused = verify ? await verify(c.req.raw) : null;
      if (refused) return refused;
      await next();
    },
    bodyLimit({
      maxSize: MAX_PROVIDER_REQUEST_BYTES,
      onError: () =>
        providerError(
          new ProviderError(
            "invalid_request",
            `a request is at most ${MAX_PROVIDER_REQUEST_BYTES} bytes`,
          ),
        ),
    }),
    async (c) => {
      const bytes = await c.req.arrayBuffer().catch(() => null);
      const text = bytes === null ? null : decodeUtf8(new Uint8Array(bytes));
      const json = text === null ? undefined : parseJson(text);
      if (json === undefined) {
        return providerError(new ProviderError("invalid_request", "the body is not UTF-8 JSON"));
      }
      const action = typeof json === "object" && json !== null
        ? (json as { action?: unknown }).action
        : undefined;
      if (typeof action === "string" && action !== "search") {
        return providerError(
          new ProviderError(
            "unsupported_action",
            `this provider does not support the "${action.slice(0, 40)}" action`,
          ),
        );
      }
      const parsed = v.safeParse(ProviderRequestSchema, json);
      if (!parsed.success) {
        const [issue] = parsed.issues;
        const at = v.getDotPath(issue) || "request";
        return providerError(new ProviderError("invalid_request", `${at}: ${issue.message}`));
      }
      const { query, limit } = parsed.output;
      let answer: Awaited<ReturnType<SearchAdapter["search"]>>;
      try {
        answer = await adapter.search({ query, limit }, c.req.raw.signal);
      } catch (e) {
        return providerError(e);
      }
      const body: ProviderResponse = {
        schema_version: PROVIDER_RESPONSE_VERSION,
        provider: adapter.name,
        scope: adapter.scope,
        candidates: answer.candidates.slice(0, limit),
        // The gateway would cut them the same way; a conforming provider needs no cutting.
        warnings: (answer.warnings ?? []).slice(0, MAX_WARNINGS).map((w) =>
          redact(w, MAX_WARNING_CHARS)
        ),
      };
      return c.json(body);
    },
  );
  app.all(
    "*",
    () =>
      providerError(
        new ProviderError(
          "unsupported_action",
          "the provider protocol is one POST of a JSON request",
        ),
      ),
  );
  // Whatever else goes wrong (a throwing verify hook included) is a failure with a body, never a
  // bare 500 the gateway has to guess about, and never a success.
  app.onError((e) => providerError(e));
  return app;
}

/**
 * A thrown error as a `tracefetch.provider-error.v1` answer with a redacted, bounded message: a
 * ProviderError keeps its code (and the status the protocol gives it), its wait and its
 * `retryable: false`, so the gateway's classifier reads the same attempt it would have read in
 * process; anything else is a 500 `search_failed`.
 */
function providerError(thrown: unknown): Response {
  const e = thrown instanceof ProviderError
    ? thrown
    : new ProviderError("search_failed", thrown instanceof Error ? thrown.message : String(thrown));
  const wait = e.retryAfterMs !== undefined && Number.isFinite(e.retryAfterMs)
    ? Math.max(0, Math.ceil(e.retryAfterMs))
    : undefined;
  const headers: Record<string, string> = { "content-type": "application/json" };
  // Retry-After in whole seconds (RFC 9110 section 10.2.3), rounded up.
  if (wait !== undefined) headers["retry-after"] = String(Math.ceil(wait / 1000));
  const body: ProviderErrorBody = {
    schema_version: PROVIDER_ERROR_VERSION,
    code: e.code,
    message: redact(e.message),
    ...(wait === undefined ? {} : { retry_after_ms: wait }),
    ...(e.retryable === false ? { retryable: false } : {}),
  };
  return new Response(JSON.stringify(body), { status: PROVIDER_ERROR_STATUS[e.code], headers });
}
