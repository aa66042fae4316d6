/**
 * A built-in provider called in process. The same honesty as over HTTP: a thrown error is a failed
 * search, a deadline is a timeout, and the adapter's answer is the document serveProvider would
 * send, checked and settled by the same function as an answer over HTTP (settle-answer.ts), so an
 * answer that breaks the wire schema is this attempt's protocol error, never a fault of the search.
 */
import type {
  Evidence,
  ExpandRequest,
  HealthAnswer,
  ProviderDescription,
  SearchAdapter,
  SearchAnswer,
} from "../protocol/provider-contract.ts";
import {
  describeAdapter,
  describeDocument,
  expandDocument,
  healthDocument,
  type OptionalAction,
  searchDocument,
} from "../protocol/provider-actions.ts";
import { type CollectionStats, statsDocument } from "../protocol/collection-stats.ts";
import { settle, type Settlement } from "./settle-answer.ts";
import { classifyThrown } from "./classify-thrown.ts";
import { protocolError } from "./failure.ts";
import type {
  ActionCall,
  DescribeResult,
  ProviderCall,
  ProviderClient,
  TransportResult,
} from "./provider-client.ts";

export function inProcessProvider(adapter: SearchAdapter): ProviderClient {
  return {
    call: (call) => callAdapter(adapter, call),
    describe: async (call) => {
      const result = await act(adapter, "describe", call);
      return result.kind === "failure" && result.outcome === "provider_protocol_error"
        ? { kind: "invalid", message: result.message }
        : result as DescribeResult;
    },
    health: (call) => act(adapter, "health", call),
    expand: (request, call) => act(adapter, "expand", call, request),
    refresh: (call) => act(adapter, "refresh", call),
    stats: (request, call) => act(adapter, "stats", call, request),
  };
}

/** What an action is asked beside itself: expand a locator, stats a query. */
type Ask = ExpandRequest | { query: string };

/**
 * One action of an adapter: the document serveProvider would send, checked by the same schema and
 * settled the same way, so an adapter answers the same in process and over HTTP.
 */
async function act<A extends OptionalAction>(
  adapter: SearchAdapter,
  action: A,
  call: ActionCall,
  request?: Ask,
): Promise<Settlement[A]> {
  const { signal } = call;
  const implemented = action === "describe" || typeof adapter[action] === "function";
  if (!implemented) {
    return {
      kind: "unsupported",
      message: `the provider does not support ${action} (in process)`,
    } as Settlement[A];
  }
  let answer: unknown;
  try {
    answer = await raceAbort(answerOf(adapter, action, signal, request), signal);
  } catch (error) {
    return { kind: "failure", ...classifyThrown(error, "adapter", signal) } as Settlement[A];
  }
  let document: unknown;
  try {
    document = documentOf(adapter, action, answer, request);
  } catch {
    // An answer too broken to put on the wire (null, not an object) is still only this call's.
    return {
      kind: "failure",
      ...protocolError("schema_violation", `the ${action} answer is not an object`),
    } as Settlement[A];
  }
  return settle(
    action,
    document,
    adapter,
    request && "locator" in request ? request.locator : undefined,
  );
}

/** What the adapter answers an action, unchecked. */
function answerOf(
  adapter: SearchAdapter,
  action: OptionalAction,
  signal: AbortSignal,
  request?: Ask,
): Promise<unknown> {
  switch (action) {
    case "describe":
      return adapter.describe
        ? adapter.describe(signal)
        : Promise.resolve(describeAdapter(adapter));
    case "health":
      return adapter.health!(signal);
    case "refresh":
      return adapter.refresh!(signal);
    case "expand":
      return adapter.expand!(request && "locator" in request ? request : { locator: "" }, signal);
    case "stats":
      return adapter.stats!({ query: request && "query" in request ? request.query : "" }, signal);
  }
}

/** The wire document an answer makes; it throws only when the answer is no object at all. */
function documentOf(
  adapter: SearchAdapter,
  action: OptionalAction,
  answer: unknown,
  request?: Ask,
): unknown {
  switch (action) {
    case "describe":
      return describeDocument(adapter, answer as ProviderDescription);
    case "health":
    case "refresh":
      return healthDocument(adapter, answer as HealthAnswer);
    case "expand":
      return expandDocument(
        adapter,
        request && "locator" in request ? request.locator : "",
        answer as Evidence,
      );
    case "stats":
      return statsDocument(adapter, answer as CollectionStats);
  }
}

async function callAdapter(adapter: SearchAdapter, call: ProviderCall): Promise<TransportResult> {
  const { signal } = call;
  let answer: SearchAnswer;
  try {
    answer = await raceAbort(
      adapter.search({
        query: call.query,
        limit: call.limit,
        ...(call.filters === undefined ? {} : { filters: call.filters }),
        ...(call.collection_stats === undefined ? {} : { collection_stats: call.collection_stats }),
      }, signal),
      signal,
    );
  } catch (error) {
    return { kind: "failure", ...classifyThrown(error, "adapter", signal) };
  }
  // Whatever the adapter handed back is judged as the wire document it would make, never trusted.
  const settled = settle(
    "search",
    searchDocument(adapter, answer ?? ({} as SearchAnswer), call.limit),
    adapter,
  );
  const cost = (answer as { cost_micros?: unknown } | null)?.cost_micros;
  return settled.kind === "answer" && typeof cost === "number" && Number.isSafeInteger(cost) &&
      cost >= 0
    ? { ...settled, cost_micros: cost }
    : settled;
}

/** An adapter that ignores its signal must still not hold the search past the deadline. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
