/**
 * runConformance(endpoint, options): calls one provider endpoint the way the gateway would, one
 * request per case, and reports every exchange with its verdict and the reasons for it.
 */
import { DEFAULT_CONFORMANCE_QUERY } from "../protocol/limits.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import {
  type CaseContext,
  type CaseSpec,
  CONFORMANCE_CASES,
  reportedIdentity,
} from "./conformance-cases.ts";
import {
  type ConformanceEntry,
  type ConformanceReport,
  ConformanceRun,
  hex,
} from "./conformance-run.ts";

export {
  type ConformanceEntry,
  type ConformanceReport,
  type ConformanceRequest,
  DEFAULT_CONFORMANCE_TIMEOUT_MS,
  MAX_REPORTED_BODY_CHARS,
  MAX_REPORTED_REASONS,
} from "./conformance-run.ts";

/** The honest-empty query is this prefix and random hex: one token no corpus holds, and too far from any word for fuzzy or prefix matching. */
export const NONSENSE_QUERY_PREFIX = "zzqx";

export type ConformanceOptions = {
  /**
   * The provider and scope the manifest would declare for this endpoint, both or neither: without
   * them the `identity` case is not checked, and the report says what the provider calls itself.
   */
  name?: string;
  scope?: string;
  fetch?: typeof fetch;
  /** Per request, from sending it to the end of its body. */
  timeoutMs?: number;
  /** Sent with every request (e.g. authorization); their values never appear in a report. */
  headers?: Record<string, string>;
  /** A query that matches something, for the limit cases (default DEFAULT_CONFORMANCE_QUERY). */
  query?: string;
};

/**
 * Throws a TypeError for an endpoint the gateway could never call (the URL policy, with http: on
 * loopback allowed as for a provider under development) and for a name without a scope or the
 * reverse; everything else is reported.
 */
export async function runConformance(
  endpoint: string,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const problem = endpointProblem(endpoint, true);
  if (problem !== null) throw new TypeError(`the endpoint ${problem}`);
  if ((options.name === undefined) !== (options.scope === undefined)) {
    throw new TypeError("declare both name and scope, or neither");
  }
  const context: CaseContext = {
    name: options.name ?? null,
    scope: options.scope ?? null,
    query: options.query ?? DEFAULT_CONFORMANCE_QUERY,
    nonsense: `${NONSENSE_QUERY_PREFIX}${hex(8)}`,
    actions: null,
    locator: null,
  };
  const traceId = hex(16);
  const run = new ConformanceRun(new URL(endpoint).href, options);
  let reported: ConformanceReport["reported"] = null;
  // One case at a time: a provider under test is not a load test, and the order stays stable.
  for (const spec of CONFORMANCE_CASES as readonly CaseSpec[]) {
    await run.run({
      case: spec.case as ConformanceEntry["case"],
      expects: spec.expects,
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "x-request-id": `conformance-${spec.case}`,
        traceparent: `00-${traceId}-${hex(8)}-01`,
      },
      body: spec.body(context),
      judge: (answer) => {
        reported ??= reportedIdentity(answer);
        const judged = spec.check(answer, context);
        spec.learn?.(answer, context);
        return judged;
      },
    });
  }
  return run.report({
    name: context.name,
    scope: context.scope,
    reported,
    query: context.query,
  });
}
