/**
 * A built-in provider called in process. The same honesty as over HTTP: a thrown error is a failed
 * search, a deadline is a timeout, and the adapter's answer is sanitised by the core like any other.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { classifyThrown } from "./classify.ts";
import type { ProviderCall, ProviderClient, TransportResult } from "./provider-client.ts";

export function inProcessProvider(adapter: SearchAdapter): ProviderClient {
  return { call: (call) => callAdapter(adapter, call) };
}

async function callAdapter(adapter: SearchAdapter, call: ProviderCall): Promise<TransportResult> {
  const { signal } = call;
  try {
    const answer = await raceAbort(
      adapter.search({ query: call.query, limit: call.limit }, signal),
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
