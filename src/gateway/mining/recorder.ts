/**
 * The recording half of mining, loaded with the first trace: traces wait in a bounded backlog
 * (the oldest dropped and counted when it is full) and are written to the sink in batches, one
 * write at a time. A failed write leaves its batch at the front of the backlog, makes the state
 * `degraded` with the reason in `health`, and is retried by a later search after a pause; the
 * next write that succeeds makes it `enabled` again.
 */
import {
  MAX_SINK_REASON_CHARS,
  MAX_TRACE_BATCH,
  MAX_TRACE_BATCH_BYTES,
  MAX_TRACE_WEBHOOK_TIMEOUT_MS,
  TRACE_DRAIN_BUDGET_MS,
  TRACE_SINK_RETRY_MS,
} from "../../protocol/trace-limits.ts";
import { buildTrace, type TraceInput } from "./build-trace.ts";
import { buildFetchTrace, type FetchTraceInput } from "./build-fetch-trace.ts";
import type { MiningConfig } from "../../config/mining-config.ts";
import { SinkError, type TraceEntry, type TraceSink } from "../../protocol/trace-sink.ts";
import { type TraceHasher, traceHasher } from "../../core/trace-hmac.ts";

/** What the recorder reports: `/v1/status` shows all of it, a search's block the first two. */
export type RecorderView = {
  state: "enabled" | "degraded";
  health: string[];
  queued: number;
  dropped: number;
  written: number;
};

export class Recorder {
  readonly #config: MiningConfig;
  readonly #hash: Promise<TraceHasher | null>;
  readonly #backlog: TraceEntry[] = [];
  #sink: Promise<TraceSink> | null = null;
  #dropped = 0;
  #written = 0;
  #failure: string | null = null;
  #retryAt = 0;
  /** The drain in progress, if any, and when it counts as abandoned (a Worker cut it short). */
  #drain: { generation: number; abandonAt: number } | null = null;
  #generation = 0;

  constructor(config: MiningConfig) {
    this.#config = config;
    this.#hash = config.secret === null ? Promise.resolve(null) : traceHasher(config.secret);
  }

  view(): RecorderView {
    const health: string[] = [];
    if (this.#failure !== null) health.push(`sink failed: ${this.#failure}`);
    if (this.#dropped > 0) {
      health.push(
        `${this.#dropped} ${this.#dropped === 1 ? "trace" : "traces"} dropped: queue full`,
      );
    }
    return {
      state: this.#failure === null ? "enabled" : "degraded",
      health,
      queued: this.#backlog.length,
      dropped: this.#dropped,
      written: this.#written,
    };
  }

  /** Builds the search's (or fetch's) trace, queues it, and writes what is queued unless a write is under way. */
  async record(input: TraceInput | FetchTraceInput): Promise<void> {
    const options = {
      hash: await this.#hash,
      rawQueries: this.#config.rawQueries,
      rawLocators: this.#config.rawLocators,
    };
    const entry = "kind" in input
      ? await buildFetchTrace(input, options)
      : await buildTrace(input, options);
    this.#backlog.push(entry);
    this.#trim();
    await this.drain();
  }

  /**
   * Writes the backlog batch by batch until it is empty, a write fails, or the drain's time is up.
   * Returns at once while another drain runs (it takes what was queued meanwhile) or while a
   * failed sink pauses: a caller never waits on another request's drain.
   */
  async drain(): Promise<void> {
    const now = Date.now();
    if (this.#drain !== null && now < this.#drain.abandonAt) return;
    if (now < this.#retryAt) return;
    const generation = ++this.#generation;
    this.#drain = {
      generation,
      abandonAt: now + TRACE_DRAIN_BUDGET_MS + 2 * MAX_TRACE_WEBHOOK_TIMEOUT_MS,
    };
    try {
      while (this.#backlog.length > 0 && Date.now() - now < TRACE_DRAIN_BUDGET_MS) {
        const batch = this.#takeBatch();
        try {
          const sink = await (this.#sink ??= this.#config.open());
          await sink.write(batch);
        } catch (error) {
          this.#sink = null;
          this.#failure = reasonOf(error, this.#config.sink);
          this.#retryAt = Date.now() + TRACE_SINK_RETRY_MS;
          this.#backlog.unshift(...batch);
          this.#trim();
          return;
        }
        this.#written += batch.length;
        this.#failure = null;
      }
    } finally {
      if (this.#drain?.generation === generation) this.#drain = null;
    }
  }

  /** The oldest traces, as many as one write takes (at least one, whatever its size). */
  #takeBatch(): TraceEntry[] {
    let count = 0;
    let bytes = 0;
    for (const entry of this.#backlog) {
      if (count > 0 && (count === MAX_TRACE_BATCH || bytes + entry.bytes > MAX_TRACE_BATCH_BYTES)) {
        break;
      }
      count++;
      bytes += entry.bytes;
    }
    return this.#backlog.splice(0, count);
  }

  /** Drops the oldest traces past the backlog's bound, counting each. */
  #trim(): void {
    const excess = this.#backlog.length - this.#config.backlog;
    if (excess <= 0) return;
    this.#backlog.splice(0, excess);
    this.#dropped += excess;
  }
}

/** A failure as `health` shows it: a SinkError's words, else only the error's code or name. */
function reasonOf(error: unknown, sink: string): string {
  if (error instanceof SinkError) return error.message.slice(0, MAX_SINK_REASON_CHARS);
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === "string" ? code : error instanceof Error ? error.name : "error";
  return `${sink} sink failed (${detail})`.slice(0, MAX_SINK_REASON_CHARS);
}
