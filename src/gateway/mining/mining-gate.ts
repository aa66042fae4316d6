/**
 * What every search asks of mining: the block its envelope carries, and, once its answer is on its
 * way, the recording of its trace. The recorder's code (traces, backlog, sinks) loads with the
 * first trace: a gateway that records nothing never loads it.
 */
import type { Mining, MiningStatus } from "../../protocol/envelope-schema.ts";
import type { TraceInput } from "./build-trace.ts";
import type { FetchTraceInput } from "./build-fetch-trace.ts";
import { type MiningConfig, SINK_VARIABLES } from "../../config/mining-config.ts";
import type { Recorder } from "./recorder.ts";

export class MiningGate {
  readonly #config: MiningConfig;
  #recorder: Recorder | null = null;
  #loading: Promise<Recorder> | null = null;
  /** Set when the recorder itself could not run (its module did not load): never an answer's fault. */
  #fault: string | null = null;

  constructor(config: MiningConfig) {
    this.#config = config;
  }

  /** The block of a search answered now; `recorded` says its trace will be queued. */
  block(): Mining {
    const { state, health } = this.status();
    return { state, configured: true, recorded: this.#config.confirmed, health };
  }

  /** Mining as `/v1/status` shows it. */
  status(): MiningStatus {
    const sink = this.#config.sink;
    if (!this.#config.confirmed) {
      return {
        state: "undecided",
        configured: true,
        sink,
        health: [
          `a trace sink is configured (${
            SINK_VARIABLES[sink]
          }) but not confirmed: nothing is recorded until the operator sets TRACEFETCH_MINING_CONFIRMED=1`,
        ],
        queued: 0,
        dropped: 0,
        written: 0,
      };
    }
    const view = this.#recorder?.view() ??
      { state: "enabled" as const, health: [], queued: 0, dropped: 0, written: 0 };
    const fault = this.#fault === null ? [] : [`recording failed: ${this.#fault}`];
    return {
      state: fault.length > 0 ? "degraded" : view.state,
      configured: true,
      sink,
      health: [...fault, ...view.health],
      queued: view.queued,
      dropped: view.dropped,
      written: view.written,
    };
  }

  /**
   * Records a search's (or a fetch's) trace. Call it only once the answer was handed over; it never
   * rejects, and nothing it does reaches an answer.
   */
  async record(input: TraceInput | FetchTraceInput): Promise<void> {
    if (!this.#config.confirmed) return;
    try {
      const recorder = this.#recorder ?? await (this.#loading ??= this.#load());
      await recorder.record(input);
      this.#fault = null;
    } catch (error) {
      this.#loading = null;
      this.#fault = error instanceof Error ? error.name : "error";
    }
  }

  async #load(): Promise<Recorder> {
    const { Recorder } = await import("./recorder.ts");
    this.#recorder = new Recorder(this.#config);
    return this.#recorder;
  }
}
