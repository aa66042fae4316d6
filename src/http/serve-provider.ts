/**
 * serveProvider(adapter): exposes any in-process provider over the HTTP provider protocol
 * (design 3.2) as a Hono app. One contract, two transports: the adapter a built-in runs in process
 * is the same one served here.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as v from "valibot";
import type { ProviderErrorCode } from "../protocol/codes.ts";
import {
  PROVIDER_ERROR_STATUS,
  PROVIDER_ERROR_VERSION,
  PROVIDER_RESPONSE_VERSION,
  ProviderRequestSchema,
  type ProviderResponse,
} from "../protocol/provider-wire.ts";
import { redact } from "../transport/redact.ts";
import { ProviderError, type SearchAdapter } from "../transport/provider-client.ts";

/** A provider request is one small JSON object; anything larger is not one. */
const MAX_PROVIDER_REQUEST_BYTES = 65_536;

export function serveProvider(adapter: SearchAdapter): Hono {
  const app = new Hono();
  const error = (code: ProviderErrorCode, message: string, retryAfterMs?: number) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    // Retry-After in whole seconds (RFC 9110 section 10.2.3), rounded up.
    if (retryAfterMs !== undefined) headers["retry-after"] = String(Math.ceil(retryAfterMs / 1000));
    const body = {
      schema_version: PROVIDER_ERROR_VERSION,
      code,
      message: redact(message),
      ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }),
    };
    return new Response(JSON.stringify(body), { status: PROVIDER_ERROR_STATUS[code], headers });
  };

  app.post(
    "*",
    bodyLimit({
      maxSize: MAX_PROVIDER_REQUEST_BYTES,
      onError: () =>
        error("invalid_request", `a request is at most ${MAX_PROVIDER_REQUEST_BYTES} bytes`),
    }),
    async (c) => {
      let json: unknown;
      try {
        json = JSON.parse(
          new TextDecoder("utf-8", { fatal: true }).decode(await c.req.arrayBuffer()),
        );
      } catch {
        return error("invalid_request", "the body is not UTF-8 JSON");
      }
      const action = typeof json === "object" && json !== null
        ? (json as { action?: unknown }).action
        : undefined;
      if (typeof action === "string" && action !== "search") {
        return error(
          "unsupported_action",
          `this provider does not support the "${action.slice(0, 40)}" action`,
        );
      }
      const parsed = v.safeParse(ProviderRequestSchema, json);
      if (!parsed.success) {
        const issue = parsed.issues[0];
        const at = issue?.path?.map((p) => String(p.key)).join(".") || "request";
        return error("invalid_request", `${at}: ${issue?.message ?? "invalid"}`);
      }
      const { query, limit } = parsed.output;
      let answer: Awaited<ReturnType<SearchAdapter["search"]>>;
      try {
        answer = await adapter.search({ query, limit }, c.req.raw.signal);
      } catch (e) {
        if (e instanceof ProviderError) return error(e.code, e.message, e.retryAfterMs);
        return error("search_failed", e instanceof Error ? e.message : String(e));
      }
      const body: ProviderResponse = {
        schema_version: PROVIDER_RESPONSE_VERSION,
        provider: adapter.name,
        scope: adapter.scope,
        candidates: answer.candidates.slice(0, limit),
        warnings: answer.warnings ?? [],
      };
      return c.json(body);
    },
  );
  app.all(
    "*",
    () => error("unsupported_action", "the provider protocol is one POST of a JSON request"),
  );
  return app;
}
