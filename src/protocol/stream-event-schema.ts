/**
 * One event of a streamed search (docs/envelope.md, "Streaming"), as valibot schemas: a line of
 * NDJSON, or the `data:` of an SSE event whose `event:` is the same name. The OpenAPI document
 * describes the streams of `/v1/search` with it, and tests validate real streams against that.
 */
import * as v from "valibot";
import {
  AttemptRecordSchema,
  DecisionSchema,
  EnvelopeSchema,
  MergedEntrySchema,
} from "./envelope-schema.ts";

const Index = v.pipe(v.number(), v.integer(), v.minValue(0));

export const StreamEventSchema = v.variant("event", [
  v.strictObject({ event: v.literal("plan"), request_id: v.string(), decision: DecisionSchema }),
  v.strictObject({
    event: v.literal("provider"),
    request_id: v.string(),
    /** The attempt's place in plan order: its index in `result.candidates`. */
    index: Index,
    attempt: AttemptRecordSchema,
  }),
  v.strictObject({
    event: v.literal("merged"),
    request_id: v.string(),
    merged: v.array(MergedEntrySchema),
  }),
  /** The envelope without `result.merged` and `result.candidates`: they came before. */
  v.strictObject({ event: v.literal("done"), ...EnvelopeSchema.entries }),
  /** NDJSON only: SSE sends a `: heartbeat` comment line instead. */
  v.strictObject({ event: v.literal("heartbeat"), request_id: v.string() }),
]);
