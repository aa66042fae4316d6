/**
 * serveProvider(adapter, options): exposes any in-process provider over the HTTP provider protocol
 * (docs/protocol.md) as a Hono app. One contract, two transports: the adapter a built-in runs in
 * process is the same one served here, and a ProviderError it throws reaches the gateway as the
 * same attempt (code, retryable, wait) either way.
 */
import type { SearchFilters } from "../protocol/search-filters.ts";
import { Hono } from "hono/tiny";
import { bodyLimit } from "hono/body-limit";
import * as v from "valibot";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_HEALTH_DIAGNOSTICS,
  MAX_PROVIDER_REQUEST_BYTES,
  MAX_STATS_REQUEST_BYTES,
  MAX_WARNING_CHARS,
  MAX_WARNINGS,
} from "../protocol/limits.ts";
import {
  type HealthAnswer,
  ProviderError,
  type SearchAdapter,
} from "../protocol/provider-contract.ts";
import {
  describeAdapter,
  describeDocument,
  DescribeRequestSchema,
  expandDocument,
  ExpandRequestSchema,
  healthDocument,
  HealthRequestSchema,
  RefreshRequestSchema,
} from "../protocol/provider-actions.ts";
import { statsDocument, StatsRequestSchema } from "../protocol/collection-stats.ts";
import {
  PROVIDER_ERROR_STATUS,
  PROVIDER_ERROR_VERSION,
  PROVIDER_RESPONSE_VERSION,
  type ProviderErrorBody,
  ProviderRequestSchema,
  type ProviderResponse,
} from "../protocol/provider-wire.ts";
import { redact } from "../io/redact.ts";
import { parseJson } from "../protocol/json-value.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";

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
  // Only a search of a provider that answers `stats` may carry its score group's statistics.
  const maxRequestBytes = typeof adapter.stats === "function"
    ? MAX_STATS_REQUEST_BYTES
    : MAX_PROVIDER_REQUEST_BYTES;

  app.post(
    "*",
    async (c, next) => {
      const refused = verify ? await verify(c.req.raw) : null;
      if (refused) return refused;
      await next();
    },
    bodyLimit({
      maxSize: maxRequestBytes,
      onError: () =>
        providerError(
          new ProviderError("invalid_request", `a request is at most ${maxRequestBytes} bytes`),
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
        return await answerAction(adapter, action, json, c.req.raw.signal).catch(providerError);
      }
      const parsed = v.safeParse(ProviderRequestSchema, json);
      if (!parsed.success) return refuseRequest(parsed.issues);
      const { query, limit, filters, collection_stats } = parsed.output;
      // The gateway sends only filters this provider listed in `describe`; any other is a refusal.
      const undeclared = Object.keys(filters ?? {}).filter((f) => !adapter.filters?.includes(f));
      if (undeclared.length > 0) {
        return providerError(
          new ProviderError("invalid_request", `this provider does not filter by ${undeclared[0]}`),
        );
      }
      // The gateway sends statistics only to a provider that declared `stats`.
      if (collection_stats !== undefined && typeof adapter.stats !== "function") {
        return providerError(
          new ProviderError("invalid_request", "this provider does not take collection_stats"),
        );
      }
      let answer: Awaited<ReturnType<SearchAdapter["search"]>>;
      try {
        answer = await adapter.search(
          {
            query,
            limit,
            // The wire schema's optional members are the filters' own: same shape, looser typing.
            ...(filters === undefined ? {} : { filters: filters as SearchFilters }),
            ...(collection_stats === undefined ? {} : { collection_stats }),
          },
          c.req.raw.signal,
        );
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
 * An action other than search (docs/protocol.md, "Actions: describe, health, expand, refresh"): describe is always answered (from the
 * adapter unless it describes itself); another action the adapter does not implement is refused
 * with 501 `unsupported_action`, never answered empty.
 */
async function answerAction(
  adapter: SearchAdapter,
  action: string,
  json: unknown,
  signal: AbortSignal,
): Promise<Response> {
  const unsupported = () =>
    providerError(
      new ProviderError(
        "unsupported_action",
        `this provider does not support the "${action.slice(0, 40)}" action`,
      ),
    );
  switch (action) {
    case "describe": {
      const parsed = v.safeParse(DescribeRequestSchema, json);
      if (!parsed.success) return refuseRequest(parsed.issues);
      const description = adapter.describe
        ? await adapter.describe(signal)
        : describeAdapter(adapter);
      return Response.json(describeDocument(adapter, description));
    }
    case "health":
    case "refresh": {
      const run = adapter[action];
      if (typeof run !== "function") return unsupported();
      const schema = action === "health" ? HealthRequestSchema : RefreshRequestSchema;
      const parsed = v.safeParse(schema, json);
      if (!parsed.success) return refuseRequest(parsed.issues);
      const health: HealthAnswer = await run.call(adapter, signal);
      // The gateway would cut them the same way; a conforming provider needs no cutting.
      const diagnostics = health.diagnostics?.slice(0, MAX_HEALTH_DIAGNOSTICS).map((d) =>
        redact(d, MAX_DIAGNOSTIC_CHARS)
      );
      return Response.json(
        healthDocument(adapter, {
          ...health,
          ...(diagnostics === undefined ? {} : { diagnostics }),
        }),
      );
    }
    case "expand": {
      if (typeof adapter.expand !== "function") return unsupported();
      const parsed = v.safeParse(ExpandRequestSchema, json);
      if (!parsed.success) return refuseRequest(parsed.issues);
      const { locator, revision } = parsed.output;
      const evidence = await adapter.expand(
        revision === undefined ? { locator } : { locator, revision },
        signal,
      );
      return Response.json(expandDocument(adapter, locator, evidence));
    }
    case "stats": {
      if (typeof adapter.stats !== "function") return unsupported();
      const parsed = v.safeParse(StatsRequestSchema, json);
      if (!parsed.success) return refuseRequest(parsed.issues);
      const stats = await adapter.stats({ query: parsed.output.query }, signal);
      return Response.json(statsDocument(adapter, stats));
    }
    default:
      return unsupported();
  }
}

/** A request that does not match its schema: 400 `invalid_request` naming the first problem. */
function refuseRequest(issues: readonly v.BaseIssue<unknown>[]): Response {
  const [issue] = issues as [v.BaseIssue<unknown>];
  const at = v.getDotPath(issue) || "request";
  return providerError(new ProviderError("invalid_request", `${at}: ${issue.message}`));
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
