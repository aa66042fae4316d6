/**
 * The one exchange the HTTP transport makes with a provider: a POST of a JSON body, and an answer
 * whose status, headers and bounded body it reads. Over any `fetch` this is a thin view of the
 * Response; a runtime whose client can do the same exchange for less attaches that client to its
 * fetch under PROVIDER_POST (Node: src/runtime/node-fetch.ts, which reads undici's body stream
 * directly rather than through a Web stream), and the transport uses it for provider calls.
 *
 * Invariants (every implementation):
 * - A redirect is returned, never followed.
 * - `read` counts decoded bytes, cancels the source at the cap or when the search's budget runs
 *   out (never returning a truncated body), and rejects with the client's own error on a failure,
 *   which classify.ts reads.
 */
import type { ByteBudget } from "./byte-budget.ts";
import { type BoundedRead, readBounded } from "./bounded-reader.ts";

export type ProviderAnswer = {
  status: number;
  /** A browser-style fetch hides a redirect it did not follow as an opaque answer (status 0). */
  opaqueRedirect: boolean;
  /** A header's value (several joined by ", "), by lower-case name; null when absent. */
  header: (name: string) => string | null;
  /** The body, read to its end or to a cap; at most once. */
  read: (cap: number, budget: ByteBudget | null) => Promise<BoundedRead>;
  /** Gives the body up unread. Never rejects. */
  cancel: () => Promise<void>;
};

export type ProviderPostInit = {
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
};

export type ProviderPost = (url: string, init: ProviderPostInit) => Promise<ProviderAnswer>;

/** Where a fetch carries its runtime's cheaper provider exchange. */
export const PROVIDER_POST: unique symbol = Symbol.for("tracefetch.provider-post");

type WithPost = typeof fetch & { [PROVIDER_POST]?: ProviderPost };

/** The exchange `fetchImpl` carries under PROVIDER_POST, else one over the fetch itself. */
export function providerPostOf(fetchImpl: typeof fetch): ProviderPost {
  return (fetchImpl as WithPost)[PROVIDER_POST] ?? postViaFetch(fetchImpl);
}

/** Attaches `post` to a fetch, for providerPostOf to find. */
export function withProviderPost(fetchImpl: typeof fetch, post: ProviderPost): typeof fetch {
  (fetchImpl as WithPost)[PROVIDER_POST] = post;
  return fetchImpl;
}

function postViaFetch(fetchImpl: typeof fetch): ProviderPost {
  return async (url, init) => {
    const response = await fetchImpl(url, {
      method: "POST",
      headers: init.headers,
      body: init.body,
      redirect: "manual",
      signal: init.signal,
    });
    return {
      status: response.status,
      opaqueRedirect: response.type === "opaqueredirect",
      header: (name) => response.headers.get(name),
      read: (cap, budget) =>
        readDeclared(response, cap, budget) ?? readBounded(response.body, cap, budget),
      cancel: async () => {
        await response.body?.cancel().catch(() => {});
      },
    };
  };
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
