/**
 * A remote provider over the HTTP provider protocol (docs/protocol.md): one POST through the
 * runtime's provider exchange, no redirects, a bounded body, strict UTF-8, strict schema, and the
 * identity check. Search and every other action take the same road: one request, one reader
 * (read-answer.ts), one settling (settle-answer.ts); only a refusal is read per action, since a 404
 * to an action may mean "not supported".
 */
import type { ProviderAction } from "../protocol/codes.ts";
import { PROVIDER_REQUEST_VERSION, readProviderError } from "../protocol/provider-wire.ts";
import { actionRequest, type OptionalAction } from "../protocol/provider-actions.ts";
import type { ByteBudget } from "../io/byte-budget.ts";
import type { ProviderExchange } from "../io/provider-exchange.ts";
import { parseRetryAfter } from "../io/retry-after.ts";
import { classifyActionStatus, classifyStatus } from "./classify-status.ts";
import { classifyThrown } from "./classify-thrown.ts";
import { protocolError } from "./failure.ts";
import type { ActionCall, DescribeResult, ProviderClient } from "./provider-client.ts";
import type { Gate } from "../io/gate.ts";
import { readAnswer } from "./read-answer.ts";
import { settle, type Settlement } from "./settle-answer.ts";

export type HttpProviderOptions = {
  name: string;
  scope: string;
  endpoint: string;
  /** Extra headers (authorization for bearer or gateway-token providers). */
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  /** The runtime's exchange with providers (src/io/provider-exchange.ts). */
  exchange: ProviderExchange;
  /** Epoch milliseconds, for Retry-After dates. */
  now: () => number;
};

export function httpProvider(options: HttpProviderOptions): ProviderClient {
  return {
    call: (call) =>
      exchange(options, "search", {
        body: {
          schema_version: PROVIDER_REQUEST_VERSION,
          action: "search",
          query: call.query,
          limit: call.limit,
          ...(call.filters === undefined ? {} : { filters: call.filters }),
          ...(call.collection_stats === undefined
            ? {}
            : { collection_stats: call.collection_stats }),
        },
        call,
        budget: call.budget,
        connectGate: call.connectGate,
      }),
    describe: async (call) => describeResult(await action(options, "describe", call)),
    health: (call) => action(options, "health", call),
    expand: (request, call) => action(options, "expand", call, request),
    refresh: (call) => action(options, "refresh", call),
    // Part of a search: the search's byte budget and its bound on connections waiting for headers.
    stats: (request, call) =>
      exchange(options, "stats", {
        body: actionRequest("stats", request),
        call,
        budget: call.budget,
        connectGate: call.connectGate,
      }),
  };
}

function action<A extends OptionalAction>(
  o: HttpProviderOptions,
  name: A,
  call: ActionCall,
  expand?: { locator: string; revision?: string | undefined },
): Promise<Settlement[A]> {
  return exchange(o, name, {
    body: actionRequest(name, expand),
    call,
    budget: null,
    connectGate: null,
    ...(expand === undefined ? {} : { locator: expand.locator }),
  });
}

/** A describe answer that is complete but unusable is `invalid`: the provider is search-only. */
function describeResult(result: Settlement["describe"]): DescribeResult {
  if (result.kind === "failure" && result.outcome === "provider_protocol_error") {
    return { kind: "invalid", message: result.message };
  }
  return result;
}

type Exchange = {
  body: Record<string, unknown>;
  call: Pick<
    ActionCall,
    "signal" | "requestId" | "traceparent" | "headers" | "declared" | "response"
  >;
  /** The search's byte budget; actions are bounded by the cap alone. */
  budget: ByteBudget | null;
  /** Bounds the connections of one search waiting for headers (Workers); null: unbounded. */
  connectGate: Gate | null;
  /** The locator an expand asked about. */
  locator?: string;
};

/**
 * The provider's own headers, the call's, then ours, each later one winning. Assigned one by one:
 * a literal of several spreads took V8's slow path, several µs an attempt.
 */
function callHeaders(
  extra: Record<string, string> | undefined,
  call: Exchange["call"],
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (extra !== undefined) { for (const name in extra) headers[name] = extra[name] as string; }
  if (call.headers !== undefined) {
    for (const name in call.headers) headers[name] = call.headers[name] as string;
  }
  headers["content-type"] = "application/json";
  headers.accept = "application/json";
  if (call.requestId !== undefined) headers["x-request-id"] = call.requestId;
  if (call.traceparent !== undefined) headers.traceparent = call.traceparent;
  return headers;
}

/** A failure as any action's settlement: a function of its own, not a closure made per call. */
function failed<A extends ProviderAction>(f: ReturnType<typeof protocolError>): Settlement[A] {
  return { kind: "failure", ...f } as Settlement[A];
}

/** One request, one read, one settling: the road every action takes. */
async function exchange<A extends ProviderAction>(
  o: HttpProviderOptions,
  name: A,
  x: Exchange,
): Promise<Settlement[A]> {
  const { signal } = x.call;
  let answer;
  let release: (() => void) | null = null;
  try {
    const headers = callHeaders(o.headers ? await o.headers() : undefined, x.call);
    // Queued time counts against the attempt's deadline: the signal already carries it.
    release = x.connectGate ? await x.connectGate.acquire(signal) : null;
    answer = await o.exchange(o.endpoint, { headers, body: JSON.stringify(x.body), signal });
    x.call.response?.responded(answer.status);
  } catch (error) {
    return failed<A>(classifyThrown(error, "connect", signal));
  } finally {
    release?.();
  }
  try {
    const read = await readAnswer(answer, { budget: x.budget, signal });
    switch (read.kind) {
      case "json":
        return settle(name, read.json, { name: o.name, scope: o.scope }, x.locator);
      case "unusable":
        return failed<A>(protocolError(read.code, read.message));
      case "refused": {
        const body = readProviderError(read.body);
        const wait = parseRetryAfter(answer.header("retry-after"), o.now());
        if (name === "search") return failed<A>(classifyStatus(read.status, body, wait));
        const action = name as OptionalAction;
        const refused = classifyActionStatus(action, read.status, body, wait, x.call.declared);
        return ("kind" in refused ? refused : failed<A>(refused)) as Settlement[A];
      }
      default: {
        const never: never = read;
        throw new Error(`unhandled read ${JSON.stringify(never)}`);
      }
    }
  } catch (error) {
    await answer.cancel();
    return failed<A>(classifyThrown(error, "body", signal));
  }
}
