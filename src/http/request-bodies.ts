/**
 * Request bodies being read, counted apart from searches so a slow sender never holds a search
 * slot, and bounded so that no caller can lock others out (docs/security.md, "The client
 * address").
 *
 * Invariants:
 * - A client address has at most `maxBodiesInRead` bodies in reading; its next one is refused with
 *   429 `overloaded`, and other clients are not touched.
 * - The bytes kept of every body in reading are charged as they arrive against one bound, and
 *   given back when its read ends; a body that would pass the bound is refused with 429
 *   `overloaded`, never truncated.
 */
import type { Context } from "hono";
import type { Command } from "../protocol/codes.ts";
import { MAX_REQUEST_BODY_BYTES } from "../protocol/limits.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import { overloaded } from "../gateway/search-run.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { envelopeResponse } from "./respond.ts";
import { type BodyRefusal, readRequestBody } from "./read-request-body.ts";

/** One body's place: the bytes it keeps are charged to the shared bound until it is released. */
export type BodyPlace = { charge: (bytes: number) => boolean; release: () => void };

/** Places for bodies in reading, per client address, and the bytes they keep across all. */
export class BodiesInRead {
  readonly #byClient = new Map<string, number>();
  #bytes = 0;

  constructor(readonly perClient: number, readonly maxBytes: number) {}

  /** Bodies `client` has in reading now. */
  reading(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /** A place for one more body of `client`; null when it has `perClient` in reading already. */
  tryTake(client: string): BodyPlace | null {
    const held = this.reading(client);
    if (held >= this.perClient) return null;
    this.#byClient.set(client, held + 1);
    let charged = 0;
    let open = true;
    return {
      charge: (bytes) => {
        if (!open || this.#bytes + bytes > this.maxBytes) return false;
        this.#bytes += bytes;
        charged += bytes;
        return true;
      },
      release: () => {
        if (!open) return;
        open = false;
        this.#bytes -= charged;
        const left = this.reading(client) - 1;
        if (left > 0) this.#byClient.set(client, left);
        else this.#byClient.delete(client);
      },
    };
  }
}

const BODY_PROBLEMS: Record<Exclude<BodyRefusal, "overloaded">, string> = {
  body_too_large: `the body exceeds ${MAX_REQUEST_BODY_BYTES} bytes`,
  request_timeout: "the request body did not arrive in time; send it promptly and retry",
  bad_request: "the request body was broken off before it ended",
};

/**
 * Reads a POST body within its cap and deadline, holding a place for its client meanwhile: the
 * bytes, or the answer that refuses them.
 */
export function bodyReader(
  bodies: BodiesInRead,
  deadlineMs: number,
): (c: Context<GatewayEnv>, command: Command) => Promise<Uint8Array | Response> {
  return async (c, command) => {
    const requestId = c.get("requestId");
    const place = bodies.tryTake(c.get("clientAddress"));
    if (place === null) {
      const what = "this client is at its limit of request bodies being read";
      return envelopeResponse({ ...overloaded(requestId, what), command });
    }
    const body = await readRequestBody(c.req.raw, {
      maxBytes: MAX_REQUEST_BODY_BYTES,
      deadlineMs,
      charge: place.charge,
    }).finally(place.release);
    if (body.ok) return body.bytes;
    // Unless the body was read to its end, the connection cannot carry another request.
    const close: Record<string, string> = body.ended ? {} : { connection: "close" };
    if (body.code === "overloaded") {
      const what = "the gateway is at its limit of request bytes being read";
      return envelopeResponse({ ...overloaded(requestId, what), command }, close);
    }
    return envelopeResponse(
      problemEnvelope(command, body.code, requestId, BODY_PROBLEMS[body.code]),
      close,
    );
  };
}
