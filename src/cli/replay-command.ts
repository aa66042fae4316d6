/**
 * `tracefetch replay TRACES (--manifest FILE | --default) [--qrels FILE] [--baseline FILE]`: runs
 * the recorded searches that kept their query's text again, in process against a manifest or the
 * embedded default (its example providers started here, as `npm start` starts them), and reports
 * how each merged list changed; with judgments, `npm run eval`'s figures for the recorded and the
 * replayed lists; with a baseline (an earlier `replay --json`), every figure that fell beyond
 * REPLAY_REGRESSION_THRESHOLD, which makes the answer exit 2, as does a provider that succeeded
 * when recorded and now fails in more than half of the replayed searches (unless
 * `--allow-failing`).
 */
import { readFile } from "node:fs/promises";
import * as v from "valibot";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { type ReplayResult, ReplayResultSchema } from "../protocol/replay-result-schema.ts";
import { REPLAY_CONCURRENCY, REPLAY_REGRESSION_THRESHOLD } from "../protocol/trace-limits.ts";
import { parseSearchRequest } from "../protocol/search-request.ts";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { listen } from "../runtime/node-listen.ts";
import type { Trace } from "../protocol/trace-schema.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import type { GatewayState } from "../gateway/gateway-state.ts";
import { type TraceHasher, traceHasher } from "../core/trace-hmac.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { LOCAL_ANONYMOUS, LOCAL_CLIENT, LOCAL_OPERATOR, localGateway } from "./local-search.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { envSettings } from "./read-manifest-file.ts";
import {
  compareSearch,
  dropsSince,
  figuresOf,
  overallOf,
  recordedList,
  replayedList,
} from "./replay/compare.ts";
import { documentIdOf, evaluate, parseQrels, type Qrels } from "./replay/metrics.ts";
import { readTraceFile } from "./replay/read-traces.ts";
import { verdict } from "./replay/verdict.ts";
import { renderReplay } from "./replay/render-replay.ts";
import { errorCode } from "./saved-connection.ts";
import { problemReply } from "./usage-reply.ts";

/** One replayed search: its row, and both lists as locators for the judged metrics. */
type Replayed = { row: ReplayResult["queries"][number]; recorded: string[]; replayed: string[] };

/** What `result.manifest` says when the searches ran against the embedded default. */
export const EMBEDDED_DEFAULT = "the embedded default";

export async function replayCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const { requestId } = ctx;
  const argv = parseCommandArgs("replay", "replay", args, ctx, {
    manifest: { type: "string" },
    default: { type: "boolean" },
    qrels: { type: "string" },
    baseline: { type: "string" },
    "allow-sensitive": { type: "boolean" },
    "allow-failing": { type: "boolean" },
  });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  const refuse = (message: string, field: string) =>
    problemReply("replay", "invalid_field", requestId, message, field);
  if (positionals.length !== 1) {
    return refuse(
      "give one trace file: tracefetch replay TRACES.jsonl (--manifest FILE | --default)",
      "traces",
    );
  }
  const embedded = values.default === true;
  if (embedded === (values.manifest !== undefined)) {
    return refuse(
      embedded
        ? "give --manifest FILE or --default, not both"
        : "--manifest FILE or --default is required: the manifest to run the traces against, or the embedded default npm start runs",
      "manifest",
    );
  }
  const path = positionals[0] as string;
  const env = envSettings(ctx);
  if (!env.ok) return problemReply("replay", "invalid_field", requestId, env.message);
  const file = await readTraceFile(path);
  if (!file.ok) return problemReply("replay", file.code, requestId, file.message, "traces");
  const qrels = values.qrels === undefined ? null : await readQrels(values.qrels);
  if (typeof qrels === "string") return refuse(qrels, "qrels");
  const baseline = values.baseline === undefined ? null : await readBaseline(values.baseline);
  if (typeof baseline === "string") return refuse(baseline, "baseline");
  // The embedded default's example providers, on free loopback ports, as `npm start` starts them.
  const running = embedded ? await startEmbeddedDefault(listen) : null;
  try {
    const local = await localGateway(
      running === null
        ? { manifestPath: values.manifest as string, settings: () => env.read, requestId }
        : { embeddedManifest: running.manifest, settings: () => env.read, requestId },
      "replay",
    );
    if (!local.ok) return { kind: "envelope", envelope: local.envelope };
    const secret = env.read.env.mining.secret;
    const hash = secret === null ? null : await traceHasher(new TextEncoder().encode(secret));
    const replayable = file.traces.filter((t) => t.query.text !== undefined);
    const runs = await replayAll(replayable, local.gateway, {
      hash,
      sensitive: values["allow-sensitive"] === true,
      signal: ctx.interrupted(),
    });
    const result: ReplayResult = {
      traces: path,
      manifest: values.manifest ?? EMBEDDED_DEFAULT,
      read: file.traces.length,
      replayed: runs.length,
      skipped: {
        query_hashed: file.traces.length - replayable.length,
        unreadable: file.unreadable,
      },
      overall: overallOf(runs.map((r) => r.row)),
      queries: runs.map((r) => r.row),
      ...(qrels === null ? {} : { metrics: judged(runs, qrels) }),
    };
    if (baseline !== null) {
      result.baseline = {
        file: values.baseline as string,
        threshold: REPLAY_REGRESSION_THRESHOLD,
        drops: dropsSince(baseline, figuresOf(result)),
      };
    }
    const envelope = verdict(result, requestId, values["allow-failing"] === true);
    return { kind: "envelope", envelope, render: (paint) => renderReplay(envelope, paint) };
  } finally {
    await running?.close();
  }
}

async function replayAll(
  traces: readonly Trace[],
  gateway: GatewayState,
  options: { hash: TraceHasher | null; sensitive: boolean; signal: AbortSignal },
): Promise<Replayed[]> {
  const known = new Set(gateway.config.manifest.providers.map((p) => p.name));
  const runs: Replayed[] = new Array(traces.length);
  let next = 0;
  const worker = async () => {
    while (next < traces.length) {
      const index = next++;
      const trace = traces[index] as Trace;
      const query = trace.query.text as string;
      const envelope = await replayOne(trace, query, gateway, options);
      const replayed = replayedList(envelope);
      const unhash = new Map<string, string>();
      if (options.hash && trace.merged.some((m) => m.locator_hmac !== undefined)) {
        for (const locator of replayed) unhash.set(await options.hash("locator", locator), locator);
      }
      const recorded = recordedList(trace, unhash);
      runs[index] = {
        row: compareSearch(trace, query, envelope, recorded, known),
        recorded,
        replayed,
      };
    }
  };
  await Promise.all(Array.from({ length: REPLAY_CONCURRENCY }, worker));
  return runs;
}

/** The recorded request run again as it was asked: scope, providers, limit, tier, deadline, filters. */
async function replayOne(
  trace: Trace,
  query: string,
  gateway: GatewayState,
  options: { sensitive: boolean; signal: AbortSignal },
): Promise<Envelope> {
  const { scope, providers, limit, tier, timeout_ms, filters } = trace.request;
  const parsed = parseSearchRequest({
    query,
    ...(scope === null ? {} : { scope }),
    ...(providers === null ? {} : { providers }),
    limit,
    ...(tier === null ? {} : { tier }),
    timeout_ms,
    ...(filters === undefined ? {} : { filters }),
  });
  if (!parsed.ok) {
    const { code, message, field } = parsed.problem;
    return problemEnvelope("search", code, trace.request_id, message, field);
  }
  return await gateway.search({
    request: parsed.request,
    caller: options.sensitive ? LOCAL_OPERATOR : LOCAL_ANONYMOUS,
    client: LOCAL_CLIENT,
    requestId: trace.request_id,
  }, { signal: options.signal });
}

/**
 * `npm run eval`'s figures over the replayed searches whose request id the judgments name (the
 * first trace of each): a judgment names a document by its whole locator or, as the eval's
 * collections do, by the locator's last path segment.
 */
function judged(runs: readonly Replayed[], qrels: Qrels): NonNullable<ReplayResult["metrics"]> {
  const byLocator = [...qrels.values()].some((j) => [...j.keys()].some((id) => id.includes("://")));
  const idOf = byLocator ? (locator: string) => locator : documentIdOf;
  const recorded = new Map<string, string[]>();
  const replayed = new Map<string, string[]>();
  for (const run of runs) {
    const id = run.row.request_id;
    if (!qrels.has(id) || recorded.has(id)) continue;
    recorded.set(id, run.recorded.map(idOf));
    replayed.set(id, run.replayed.map(idOf));
  }
  const only = [...recorded.keys()];
  const before = evaluate(recorded, qrels, { only });
  const after = evaluate(replayed, qrels, { only });
  return {
    queries: after.queries,
    recorded: after.queries === 0 ? null : before.mean,
    replayed: after.queries === 0 ? null : after.mean,
  };
}

async function readQrels(path: string): Promise<Qrels | string> {
  try {
    return parseQrels(await readFile(path, "utf8"));
  } catch (error) {
    return error instanceof Error && !("code" in error)
      ? `--qrels ${path}: ${error.message}`
      : `--qrels: cannot read ${path} (${errorCode(error)})`;
  }
}

/** The figures of an earlier `tracefetch replay --json`, or why they cannot be read. */
async function readBaseline(path: string): Promise<Map<string, number> | string> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    return error instanceof SyntaxError
      ? `--baseline ${path} is not JSON`
      : `--baseline: cannot read ${path} (${errorCode(error)})`;
  }
  const result = value as { command?: unknown; result?: unknown } | null;
  const parsed = v.safeParse(ReplayResultSchema, result?.result);
  if (result?.command !== "replay" || !parsed.success) {
    return `--baseline ${path} is not the output of tracefetch replay --json`;
  }
  return figuresOf(parsed.output);
}
