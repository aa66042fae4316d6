/**
 * A built-in provider called in process. The same honesty as over HTTP: a thrown error is a failed
 * search, a deadline is a timeout, and the adapter's answer is sanitised by the core like any other.
 */
import type { ExpandRequest, SearchAdapter } from "../protocol/provider-contract.ts";
import {
  describeAdapter,
  describeDocument,
  expandDocument,
  healthDocument,
  type OptionalAction,
} from "../protocol/provider-actions.ts";
import { type Settled, settleJson } from "./action-answers.ts";
import { classifyThrown, protocolError } from "./classify.ts";
import type {
  ActionCall,
  ActionResult,
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
  };
}

/**
 * One action of an adapter: the document serveProvider would send, checked by the same schema and
 * settled the same way, so an adapter answers the same in process and over HTTP.
 */
async function act<A extends OptionalAction>(
  adapter: SearchAdapter,
  action: A,
  call: ActionCall,
  request?: ExpandRequest,
): Promise<ActionResult<Settled[A]>> {
  const { signal } = call;
  const implemented = action === "describe" || typeof adapter[action] === "function";
  if (!implemented) {
    return { kind: "unsupported", message: `the provider does not support ${action} (in process)` };
  }
  let document: unknown;
  try {
    document = await raceAbort(documentFor(adapter, action, signal, request), signal);
  } catch (error) {
    return { kind: "failure", ...classifyThrown(error, "adapter", signal) };
  }
  const settled = settleJson(action, document, adapter, request?.locator);
  return settled.kind === "problem"
    ? { kind: "failure", ...protocolError(settled.code, settled.message) }
    : settled;
}

async function documentFor(
  adapter: SearchAdapter,
  action: OptionalAction,
  signal: AbortSignal,
  request?: ExpandRequest,
): Promise<unknown> {
  switch (action) {
    case "describe":
      return describeDocument(
        adapter,
        adapter.describe ? await adapter.describe(signal) : describeAdapter(adapter),
      );
    case "health":
      return healthDocument(adapter, await adapter.health!(signal));
    case "refresh":
      return healthDocument(adapter, await adapter.refresh!(signal));
    case "expand": {
      const asked = request ?? { locator: "" };
      return expandDocument(adapter, asked.locator, await adapter.expand!(asked, signal));
    }
  }
}

async function callAdapter(adapter: SearchAdapter, call: ProviderCall): Promise<TransportResult> {
  const { signal } = call;
  try {
    const answer = await raceAbort(
      adapter.search({
        query: call.query,
        limit: call.limit,
        ...(call.filters === undefined ? {} : { filters: call.filters }),
      }, signal),
      signal,
    );
    return {
      kind: "answer",
      candidates: answer.candidates,
      warnings: answer.warnings ?? [],
      ...(answer.cost_micros === undefined ? {} : { cost_micros: answer.cost_micros }),
    };
  } catch (error) {
    return { kind: "failure", ...classifyThrown(error, "adapter", signal) };
  }
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
