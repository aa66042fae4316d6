/**
 * `tracefetch search -`: one search request (docs/envelope.md) from stdin, held to the gateway's own
 * rules (at most 1 MiB, strict UTF-8 with a BOM dropped, exactly one JSON object, the strict
 * schema) before anything is sent anywhere.
 */
import { MAX_REQUEST_BODY_BYTES } from "../protocol/limits.ts";
import {
  parseSearchRequestText,
  type RequestProblem,
  type SearchRequest,
} from "../protocol/search-request.ts";
import { decodeUtf8, readBounded } from "../io/bounded-reader.ts";

export type StdinRequest =
  | { ok: true; request: SearchRequest; input: Record<string, unknown> }
  | { ok: false; problem: RequestProblem };

export async function readStdinRequest(stdin: ReadableStream<Uint8Array>): Promise<StdinRequest> {
  const read = await readBounded(stdin, MAX_REQUEST_BODY_BYTES, null);
  if (!read.ok) {
    return {
      ok: false,
      problem: {
        code: "body_too_large",
        message: `stdin holds more than ${MAX_REQUEST_BODY_BYTES} bytes`,
      },
    };
  }
  const text = decodeUtf8(read.bytes);
  if (text === null) {
    return { ok: false, problem: { code: "invalid_utf8", message: "stdin is not valid UTF-8" } };
  }
  const parsed = parseSearchRequestText(text, "stdin");
  if (!parsed.ok) return parsed;
  return {
    ok: true,
    request: parsed.request,
    input: JSON.parse(text) as Record<string, unknown>,
  };
}
