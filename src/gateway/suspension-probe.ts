/**
 * The gateway's own probe of a provider for its suspension (docs/protocol.md, "Suspension"): its
 * `health` when its describe lists health (`ok` or `degraded` is a success), else a search for the
 * conformance default query (any valid answer, an empty one included, is a success). It asks as
 * the gateway itself (`sub: tracefetch-gateway`), through the provider's client and under its
 * `max_concurrency`, within a deadline of its own, and settles its claim whatever happens.
 */
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { DEFAULT_CONFORMANCE_QUERY, MIN_LIMIT } from "../protocol/limits.ts";
import { AttemptAbort } from "../transport/attempt-abort.ts";
import { classifyThrown } from "../transport/classify-thrown.ts";
import { answerBudget, type Gate, type ProviderClient } from "../transport/provider-client.ts";
import { judge, type ProbeClaim, type Queued } from "../core/suspension.ts";
import type { Verdict } from "../core/breaker.ts";
import { QueueWatch } from "../core/queue-watch.ts";
import { traceContexts } from "../core/trace-context.ts";

/** What a probe needs of the gateway instance it runs in. */
export type ProbeHost = {
  client(spec: ProviderSpec): ProviderClient;
  gate(spec: ProviderSpec): Gate;
  /** Headers for one probe: a provider token minted for the gateway itself; null for none. */
  headersFor: ((spec: ProviderSpec, budgetMs: number) => Promise<Record<string, string>>) | null;
  /** Whether the provider's describe lists `health`; undefined when not known. */
  declaresHealth(spec: ProviderSpec): boolean | undefined;
};

const NEUTRAL: Verdict = { kind: "neutral" };
const SUCCESS: Verdict = { kind: "success" };

/** Probes the claimed provider and settles the claim; never throws. */
export async function runProbe(host: ProbeHost, claim: ProbeClaim): Promise<void> {
  let verdict = NEUTRAL;
  try {
    verdict = await probe(host, claim);
  } catch {
    // A token that could not be minted, or a client that threw past its classifier: our side.
    verdict = NEUTRAL;
  }
  // Awaited: on Workers the probe runs inside a waitUntil, which ends with this promise, and a
  // store write still in flight then would be cancelled, leaving the probe's verdict unrecorded.
  await claim.settle(verdict);
}

async function probe(host: ProbeHost, claim: ProbeClaim): Promise<Verdict> {
  const { spec } = claim;
  const budgetMs = claim.deadlineMs();
  // Its claim lapsed before it could start: another probe may be out by now.
  if (budgetMs <= 0) return NEUTRAL;
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(
    () => controller.abort(new AttemptAbort("timeout", "provider_timeout")),
    budgetMs,
  );
  const gate = new QueueWatch(host.gate(spec));
  let release: (() => void) | null = null;
  try {
    release = await gate.acquire(signal).catch(() => null);
    // Its deadline caught it in our own queue: that says nothing of the provider.
    if (release === null) return NEUTRAL;
    const headers = host.headersFor === null ? {} : await host.headersFor(spec, budgetMs);
    const queues: Queued = { reached: true, waited: gate.waited };
    const client = host.client(spec);
    if (host.declaresHealth(spec) === true) {
      const result = await client.health({ signal, headers, declared: true });
      switch (result.kind) {
        case "answer":
          // `unavailable` is the provider's own word that it cannot search now.
          return result.answer.status === "unavailable"
            ? { kind: "failure", waitMs: null }
            : SUCCESS;
        case "unsupported":
          // Its describe listed health, yet it does not answer it: a search decides instead.
          break;
        case "failure":
          return judge(result, queues);
        default: {
          const never: never = result;
          throw new Error(`unhandled health result ${JSON.stringify(never)}`);
        }
      }
    }
    try {
      const result = await client.call({
        query: DEFAULT_CONFORMANCE_QUERY,
        limit: MIN_LIMIT,
        requestId: crypto.randomUUID(),
        traceparent: traceparent(),
        signal,
        // One answer's cap: the probe belongs to no search whose budget it could share.
        budget: answerBudget(),
        connectGate: null,
        headers,
      });
      return result.kind === "answer" ? SUCCESS : judge(result, queues);
    } catch (error) {
      return judge(classifyThrown(error, "connect", signal), queues);
    }
  } finally {
    release?.();
    clearTimeout(timer);
  }
}

/** A W3C traceparent of its own: the probe belongs to no caller's trace. */
function traceparent(): string {
  return traceContexts(1)[0] as string;
}
