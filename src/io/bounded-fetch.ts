/**
 * boundedFetch(fetch, maxBytes, what): a fetch whose answer body has been read through the bounded
 * reader and decoded as strict UTF-8 before anyone sees it, for a JSON document a third party
 * serves (a JWKS): the third party must not decide how much we hold.
 */
import { decodeUtf8, readBounded } from "./bounded-reader.ts";

/**
 * Throws (as fetch itself does on a network failure) when the body passes `maxBytes` or is not
 * UTF-8; `what` names the document in that error, e.g. "the JWKS".
 */
export function boundedFetch(
  fetchImpl: typeof fetch,
  maxBytes: number,
  what: string,
): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetchImpl(url, init);
    const read = await readBounded(response.body, maxBytes, null);
    if (!read.ok) throw new Error(`${what} is over ${maxBytes} bytes`);
    const text = decodeUtf8(read.bytes);
    if (text === null) throw new Error(`${what} is not UTF-8`);
    return new Response(text, { status: response.status, headers: response.headers });
  };
}
