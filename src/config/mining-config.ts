/**
 * Which trace sink a gateway has, checked at start: one sink at most; a sink needs the HMAC secret
 * unless raw queries are opted in; a webhook needs the gateway's signing key and an https URL; a
 * file or Queue sink needs the runtime that can write it.
 */
import { ConfigError } from "../protocol/config-error.ts";
import { MIN_TRACE_SECRET_BYTES } from "../protocol/trace-limits.ts";
import { TRACE_JWS_TYPE } from "../protocol/trace-version.ts";
import { urlProblem } from "./env-values.ts";
import type { ProviderTokenSigner } from "../auth/provider-token-signer.ts";
import type { MiningVariables } from "./settings.ts";
import type { SinkKind, TraceSink } from "../protocol/trace-sink.ts";

/** A gateway's mining, resolved: the sink (opened on first use) and what a trace keeps. */
export type MiningConfig = {
  sink: SinkKind;
  /** TRACEFETCH_MINING_CONFIRMED: until the operator confirms, nothing is recorded (`undecided`). */
  confirmed: boolean;
  /** Opens the sink the first time a batch is written; the webhook's code loads only then. */
  open: () => Promise<TraceSink>;
  /** The HMAC key's bytes; null only when raw queries are opted in and no secret is set. */
  secret: Uint8Array | null;
  rawQueries: boolean;
  rawLocators: boolean;
  backlog: number;
};

/** The variable that configures each sink. */
export const SINK_VARIABLES: Record<SinkKind, string> = {
  file: "TRACEFETCH_TRACE_FILE",
  webhook: "TRACEFETCH_TRACE_WEBHOOK",
  queue: "TRACEFETCH_TRACE_QUEUE",
};

export type MiningInputs = {
  vars: MiningVariables;
  /** The file or Queue sink a runtime opened for TRACEFETCH_TRACE_FILE or TRACEFETCH_TRACE_QUEUE. */
  sink: TraceSink | undefined;
  signer: ProviderTokenSigner | null;
  allowLoopback: boolean;
  fetch: typeof fetch;
  onWarning: (line: string) => void;
};

/** The mining configuration, or null when no sink is set; throws ConfigError on a bad combination. */
export function resolveMining(inputs: MiningInputs): MiningConfig | null {
  const { vars } = inputs;
  // At least MIN_TRACE_SECRET_BYTES: its variable's schema (settings.ts) checked it.
  const secret = vars.secret === null ? null : new TextEncoder().encode(vars.secret);
  const configured = (Object.keys(SINK_VARIABLES) as SinkKind[]).filter((kind) =>
    vars[kind] !== null
  );
  if (configured.length > 1) {
    throw new ConfigError(
      `set one trace sink, not ${configured.map((k) => SINK_VARIABLES[k]).join(" and ")}`,
    );
  }
  const kind = configured[0];
  if (kind === undefined) {
    const set = [
      vars.confirmed && "TRACEFETCH_MINING_CONFIRMED",
      vars.rawQueries && "TRACEFETCH_TRACE_RAW_QUERIES",
      vars.rawLocators && "TRACEFETCH_TRACE_RAW_LOCATORS",
    ].filter((name) => name !== false);
    if (set.length > 0) {
      inputs.onWarning(
        `${
          set.join(" and ")
        } set, but no trace sink is (TRACEFETCH_TRACE_FILE, TRACEFETCH_TRACE_WEBHOOK or TRACEFETCH_TRACE_QUEUE): nothing is recorded`,
      );
    }
    return null;
  }
  if (secret === null && !vars.rawQueries) {
    throw new ConfigError(
      `${
        SINK_VARIABLES[kind]
      } needs TRACEFETCH_TRACE_SECRET (at least ${MIN_TRACE_SECRET_BYTES} bytes) to hash each query, or TRACEFETCH_TRACE_RAW_QUERIES=1 to record queries in the clear`,
    );
  }
  if (!vars.confirmed) {
    // Said at start, not only inside answers: until confirmed the sink receives nothing.
    inputs.onWarning(
      `${
        SINK_VARIABLES[kind]
      } is set but TRACEFETCH_MINING_CONFIRMED is not: mining is undecided, and nothing is recorded until the operator sets TRACEFETCH_MINING_CONFIRMED=1`,
    );
  }
  return {
    sink: kind,
    confirmed: vars.confirmed,
    open: opener(kind, inputs),
    secret,
    rawQueries: vars.rawQueries,
    rawLocators: vars.rawLocators,
    backlog: vars.backlog,
  };
}

function opener(kind: SinkKind, inputs: MiningInputs): () => Promise<TraceSink> {
  const { vars, sink, signer } = inputs;
  if (kind === "webhook") {
    const url = vars.webhook as string;
    const problem = urlProblem(url, { kind: "endpoint", allowLoopback: inputs.allowLoopback });
    if (problem !== null) throw new ConfigError(`TRACEFETCH_TRACE_WEBHOOK ${problem}`);
    if (signer === null) {
      throw new ConfigError(
        "TRACEFETCH_TRACE_WEBHOOK needs TRACEFETCH_SIGNING_JWK: every batch is signed with the gateway's key",
      );
    }
    return async () =>
      (await import("../transport/webhook-sink.ts")).webhookSink({
        url,
        timeoutMs: vars.webhookTimeoutMs,
        fetch: inputs.fetch,
        sign: (payload) => signer.signDocument(payload, TRACE_JWS_TYPE),
      });
  }
  if (sink?.kind !== kind) {
    throw new ConfigError(
      kind === "file"
        ? "TRACEFETCH_TRACE_FILE is set, but this runtime writes no files (Node and Deno do); on Workers use TRACEFETCH_TRACE_QUEUE or TRACEFETCH_TRACE_WEBHOOK"
        : "TRACEFETCH_TRACE_QUEUE names a Workers Queue binding, which only a Worker has; here use TRACEFETCH_TRACE_FILE or TRACEFETCH_TRACE_WEBHOOK",
    );
  }
  return () => Promise.resolve(sink);
}
