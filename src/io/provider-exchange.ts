/**
 * The one exchange with a provider, a port each runtime fills: a POST of a JSON body, and an answer
 * whose status, headers and bounded body the transport reads. Over any `fetch` it is a thin view of
 * the Response (exchangeOverFetch); a runtime whose client can make the same exchange for less
 * passes its own from its composition root (Node: src/runtime/node-exchange.ts, which collects
 * undici's body directly rather than through a Web stream).
 *
 * Invariants (every implementation):
 * - A redirect is returned, never followed.
 * - `read` counts decoded bytes, cancels the source at the cap or when the search's budget runs
 *   out (never returning a truncated body), and rejects with the client's own error on a failure,
 *   which the transport's classifier reads; a body that does not decode as its content-encoding
 *   says is marked UNDECODABLE_BODY where the client can tell.
 */
import type { ByteBudget } from "./byte-budget.ts";
import { type BoundedRead, type EnoughRead, readBounded } from "./bounded-reader.ts";

/**
 * The code a client puts on a body that does not decode as its content-encoding says (the Node
 * exchange marks its decoder's own failures with it).
 */
export const UNDECODABLE_BODY = "ERR_CONTENT_DECODING_FAILED";

export type ProviderAnswer = {
  status: number;
  /** A browser-style fetch hides a redirect it did not follow as an opaque answer (status 0). */
  opaqueRedirect: boolean;
  /** A header's value (several joined by ", "), by lower-case name; null when absent. */
  header: (name: string) => string | null;
  /** The body, read to its end, to a cap, or until `enough` says so; at most once. */
  read: (cap: number, budget: ByteBudget | null, enough?: EnoughRead) => Promise<BoundedRead>;
  /** Gives the body up unread. Never rejects. */
  cancel: () => Promise<void>;
};

export type ExchangeInit = {
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
};

export type ProviderExchange = (url: string, init: ExchangeInit) => Promise<ProviderAnswer>;

/** The exchange over a runtime's own fetch (Deno, Workers, and any fetch a test passes). */
export function exchangeOverFetch(fetchImpl: typeof fetch): ProviderExchange {
  return async (url, init) =>
    answerOf(
      await fetchImpl(url, {
        method: "POST",
        headers: init.headers,
        body: init.body,
        redirect: "manual",
        signal: init.signal,
      }),
    );
}

/** A fetch Response as an answer: its body read once, bounded, or given up. */
export function answerOf(response: Response): ProviderAnswer {
  return {
    status: response.status,
    opaqueRedirect: response.type === "opaqueredirect",
    header: (name) => response.headers.get(name),
    // A declared length within the cap is read whole: that body ends, so `enough` adds nothing.
    read: (cap, budget, enough) =>
      readDeclared(response, cap, budget) ?? readDecoded(response, cap, budget, enough),
    cancel: async () => {
      await response.body?.cancel().catch(() => {});
    },
  };
}

/** The body read, decoded as its Content-Encoding says where the runtime's fetch left it encoded. */
async function readDecoded(
  response: Response,
  cap: number,
  budget: ByteBudget | null,
  enough?: EnoughRead,
): Promise<BoundedRead> {
  const body = response.body;
  const encoding = response.headers.get("content-encoding")?.trim().toLowerCase();
  if (body === null || encoding !== "deflate") return await readBounded(body, cap, budget, enough);
  // A module of its own on Workers, whose fetch decodes deflate itself: only Deno's leaves it
  // encoded. (src/io sits below src/core's lazy(); the runtime keeps the module once loaded.)
  const { inflateIfDeflated } = await import("./inflate-if-deflated.ts");
  return await readBounded(inflateIfDeflated(body, undecodableDeflate), cap, budget, enough);
}

/** A failure of the deflate decoder itself, marked UNDECODABLE_BODY for the classifier. */
function undecodableDeflate(cause: unknown): Error {
  return Object.assign(
    new TypeError("the body does not decode as content-encoding deflate", { cause }),
    { code: UNDECODABLE_BODY },
  );
}

/**
 * A body whose length the provider declared, uncompressed and within the cap, read whole by the
 * runtime: its HTTP client never hands over more bytes than Content-Length says (RFC 9112 section
 * 6.3), so the cap holds without counting chunks, and the search's budget is charged the declared
 * length before a byte is read. On Deno this halves the CPU of reading an answer, which a loop of
 * reader.read() spends on one promise per chunk. Null when the answer does not qualify: a
 * compressed body's Content-Length counts encoded bytes, and a missing or malformed one promises
 * nothing, so those go through the counting reader.
 */
function readDeclared(
  response: Response,
  cap: number,
  budget: ByteBudget | null,
): Promise<BoundedRead> | null {
  if (response.body === null) return null;
  const encoding = response.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") return null;
  const length = response.headers.get("content-length");
  if (length === null || !DECIMAL.test(length)) return null;
  const declared = Number(length);
  if (declared > cap) return null;
  if (budget !== null && !budget.take(declared)) {
    return response.body.cancel("over the search's byte budget").catch(() => {}).then(
      (): BoundedRead => ({ ok: false, reason: "budget_exceeded", read: 0 }),
    );
  }
  return response.arrayBuffer().then((buffer): BoundedRead =>
    // Only a client that decoded a body yet dropped its Content-Encoding could get here; the cap
    // still decides.
    buffer.byteLength > cap
      ? { ok: false, reason: "too_large", read: buffer.byteLength }
      : { ok: true, bytes: new Uint8Array(buffer) }
  );
}

/** Content-Length as RFC 9110 section 8.6 writes it: digits only (a list is left to the reader). */
const DECIMAL = /^[0-9]{1,15}$/;
