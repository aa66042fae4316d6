/**
 * The shape of one generated provider answer, as plain data so a counterexample reads as what the
 * provider sent: the status line, content type and encoding, body, framing, extra headers, write
 * splits and ending. Also the two providers' names and the content types that count as JSON, which
 * the generator and the expected outcomes share.
 */

/** The fuzzed provider's name and scope, and the healthy provider's. */
export const FUZZED = "fuzzed";
export const HEALTHY_NAME = "healthy";

/**
 * The JSON content types the generator sends. The gateway reads each as JSON (docs/protocol.md), so
 * the expected outcomes treat every other type as `wrong_content_type`.
 */
export const JSON_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/vnd.tracefetch.v1+json",
  "application/problem+json",
  "application/json; api_key=S3CRET",
];

/** A JSON value as written on the wire: objects keep duplicate and prototype keys, numbers may be raw text. */
export type Json =
  | null
  | boolean
  | number
  | string
  | Json[]
  | { obj: Array<[string, Json]> }
  | { raw: string };

export type WireCandidateSpec = {
  title: string;
  locator: string;
  snippet?: string | null;
  published_at?: string | null;
  metadata?: Array<[string, Json]>;
};

/** One way a well-formed answer breaks schema version 1. */
export type Mutation =
  | { m: "unknown-field"; at: "top" | "candidate"; name: string }
  | { m: "missing-candidates" }
  | { m: "candidates-object" }
  | { m: "wrong-version"; value: string }
  | { m: "title-number" }
  | { m: "locator-empty" }
  | { m: "metadata-array" }
  | { m: "metadata-string" }
  | { m: "warnings-numbers" }
  | { m: "body-null" }
  | { m: "body-array" };

export type BodySpec =
  | {
    kind: "answer";
    candidates: WireCandidateSpec[];
    warnings?: string[];
    /** Another provider or scope than the manifest declares. */
    identity?: { field: "provider" | "scope" | "both"; value: string };
    mutation?: Mutation;
  }
  | {
    kind: "error";
    version: string;
    code: string;
    message?: string;
    retry_after_ms?: Json;
    retryable?: Json;
  }
  | { kind: "invalid-json"; text: string }
  | { kind: "invalid-utf8"; bytes: number[]; at: number }
  | { kind: "empty" }
  | { kind: "huge"; bytes: number };

export type Codec = "gzip" | "deflate" | "br";

export type EncodingSpec =
  | { kind: "none" }
  /** A label no runtime decodes: the bytes pass through as they are. */
  | { kind: "label"; label: "identity" | "x-fuzz" }
  | { kind: "encoded"; codec: Codec }
  /** Labelled with a codec, sent as plain bytes. */
  | { kind: "mislabelled"; codec: Codec }
  /** Encoded, then cut short (permille of the encoded length): framing intact, the stream is not. */
  | { kind: "corrupt"; codec: Codec; keep: number }
  /** A body decoding to 16 MiB of zeros. */
  | { kind: "bomb"; codec: "gzip" | "br" };

export type FramingSpec =
  | { kind: "length" }
  | { kind: "chunked" }
  /** No length, no chunking: the body ends when the connection closes. */
  | { kind: "close" }
  | { kind: "length-long"; by: number }
  | { kind: "length-short"; by: number }
  | { kind: "two-lengths" }
  | { kind: "length-and-chunked" }
  | { kind: "chunk-bad-hex" }
  | { kind: "chunk-no-terminator" }
  | { kind: "chunk-size-too-big" }
  | { kind: "chunk-missing-crlf" }
  | { kind: "header-without-colon" };

export type EndingSpec =
  | { kind: "end" }
  /** Stop at this permille of the bytes and close (FIN), reset (RST), or keep the socket open. */
  | { kind: "close-at" | "reset-at" | "hang-at"; at: number };

export type FuzzAnswer = {
  /** The search's `limit` (at least 2, so the healthy provider's first result always ranks). */
  limit: number;
  /** 1xx answers sent before the final one. */
  interim: number[];
  /** The final status, or "none": a raw 1xx and then the connection closes. */
  final: number | "none";
  /** An HTTP/1.0 status line (with length or close framing only). */
  http10: boolean;
  contentType: string | null;
  encoding: EncodingSpec;
  body: BodySpec;
  framing: FramingSpec;
  headers: Array<[string, string]>;
  /** Where the bytes are split into separate writes (permille). */
  splits: number[];
  ending: EndingSpec;
};
