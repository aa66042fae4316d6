/**
 * The webhook sink: each batch is POSTed as one compact JWS (`content-type: application/jose`),
 * signed with the gateway's Ed25519 key under `typ: tracefetch-trace+jws`; its payload is a
 * `tracefetch.trace-batch.v1` document. A 2xx answer within the timeout is success; anything else,
 * a redirect included (never followed), is a failure whose reason names no URL.
 */
import { MAX_TRACE_WEBHOOK_ANSWER_BYTES } from "../protocol/trace-limits.ts";
import { TRACE_BATCH_VERSION } from "../protocol/trace-version.ts";
import { readBounded } from "../io/bounded-reader.ts";
import { classifyThrown } from "./classify-thrown.ts";
import { SinkError, type TraceSink } from "../protocol/trace-sink.ts";

export type WebhookOptions = {
  url: string;
  timeoutMs: number;
  fetch: typeof fetch;
  /** Signs the payload as a compact JWS with the gateway's key. */
  sign: (payload: Uint8Array) => Promise<string>;
};

export function webhookSink(options: WebhookOptions): TraceSink {
  const encoder = new TextEncoder();
  return {
    kind: "webhook",
    async write(entries) {
      const payload = `{"schema_version":${JSON.stringify(TRACE_BATCH_VERSION)},"traces":[${
        entries.map((e) => e.json).join(",")
      }]}`;
      const body = await options.sign(encoder.encode(payload));
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), options.timeoutMs);
      try {
        const response = await options.fetch(options.url, {
          method: "POST",
          headers: { "content-type": "application/jose" },
          body,
          redirect: "manual",
          signal: controller.signal,
        });
        // Only the status counts; the rest of the answer is read a little, then let go.
        await readBounded(response.body, MAX_TRACE_WEBHOOK_ANSWER_BYTES, null).catch(() => {});
        if (response.status < 200 || response.status > 299) {
          throw new SinkError(`webhook answered ${response.status}`);
        }
      } catch (error) {
        if (error instanceof SinkError) throw error;
        if (controller.signal.aborted) {
          throw new SinkError(`webhook did not answer within ${options.timeoutMs} ms`);
        }
        throw new SinkError(
          `webhook unreachable (${classifyThrown(error, "connect", controller.signal).code})`,
        );
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
