/**
 * Node only: a `fetch` for provider calls built on undici's `request`, which costs about half of
 * what Node's own fetch does per exchange (the bench measures the difference). It keeps fetch's
 * behaviour where the transport depends on it: redirects are returned, never followed; the body
 * is decompressed (gzip, deflate, br) as it streams, so the bounded reader counts decoded bytes;
 * cancelling the body destroys the socket's stream; the AbortSignal aborts the whole exchange.
 * Calls it does not cover (a non-string body, redirect other than "manual") go to the global fetch.
 *
 * nodePorts() pairs it with the provider exchange (node-exchange.ts): the same requests through the
 * same connection pool, without the Response, Headers and streams a fetch must build (on Node 20 a
 * ReadableStream alone costs about 14 µs to create).
 *
 * Every stream destroyed here has an 'error' listener first: undici's body emits an error when it
 * is destroyed before its end, and an 'error' event nobody listens for ends the Node process.
 */
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import { PROVIDER_KEEP_ALIVE_MS } from "../protocol/limits.ts";
import type { ProviderExchange } from "../io/provider-exchange.ts";
import { nodeExchange, NULL_BODY, requestHeaders } from "./node-exchange.ts";
import { decoderFor, undecodable } from "./node-body.ts";

/** Node's ports for reaching providers and third parties: one connection pool for both. */
export type NodePorts = { fetch: typeof fetch; exchange: ProviderExchange };

export function nodePorts(): NodePorts {
  const agent = new Agent({ keepAliveTimeout: PROVIDER_KEEP_ALIVE_MS });
  return { fetch: fetchOver(agent), exchange: nodeExchange(agent) };
}

function fetchOver(agent: Agent): typeof fetch {
  const nodeFetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    if (
      init.redirect !== "manual" ||
      (body !== undefined && body !== null && typeof body !== "string")
    ) {
      return await fetch(input, init);
    }
    const answer = await request(
      typeof input === "string" || input instanceof URL ? input : input.url,
      {
        method: (init.method ?? "GET") as "GET",
        headers: requestHeaders(init.headers),
        body: body ?? null,
        signal: init.signal ?? null,
        dispatcher: agent,
      },
    );
    const out = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    if (NULL_BODY.has(answer.statusCode)) {
      // Drained, not destroyed, so the connection stays reusable; if a faulty server sends bytes
      // anyway, dump() stops after 128 KiB and swallows the error that stopping raises.
      answer.body.on("error", ignore);
      void answer.body.dump().catch(ignore);
      return new Response(null, { status: answer.statusCode, headers: out });
    }
    return new Response(decoded(answer.body, out.get("content-encoding")), {
      status: answer.statusCode,
      headers: out,
    });
  };
  return nodeFetch as typeof fetch;
}

/**
 * The body as a web stream, decompressed; cancelling it destroys the source and the decoder. A
 * decoder that fails on its own (not because the source failed) means the body is not in the
 * encoding it claims: that error is marked with UNDECODABLE_BODY for the classifier.
 */
function decoded(source: Readable, encoding: string | null): ReadableStream<Uint8Array> {
  const decoder = decoderFor(encoding);
  let sourceFailed = false;
  source.on("error", ignore);
  if (decoder) {
    decoder.on("error", ignore);
    source.once("error", (error) => {
      sourceFailed = true;
      decoder.destroy(error);
    });
    source.pipe(decoder);
  }
  const stream: Readable = decoder ?? source;
  const chunks = stream[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        source.destroy();
        throw decoder && !sourceFailed ? undecodable(encoding, error) : error;
      }
      if (next.done) controller.close();
      else {
        const { value } = next;
        controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      }
    },
    cancel() {
      stream.destroy();
      source.destroy();
    },
  });
}

function ignore(): void {}
