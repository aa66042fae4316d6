/**
 * Turns a generated answer into the exact bytes a provider server writes: the JSON body (with
 * duplicate keys and raw numbers kept), its content encoding, the status lines and headers, the
 * framing, and the cut and write splits of its ending; plus what a client may decode the body to,
 * which the expected outcomes read.
 */
import { Buffer } from "node:buffer";
import { brotliCompressSync, constants as zlib, deflateSync, gzipSync } from "node:zlib";
import {
  type BodySpec,
  type Codec,
  type FramingSpec,
  type FuzzAnswer,
  FUZZED,
  type Json,
  type WireCandidateSpec,
} from "./fuzz-answer.ts";

/** A gzip bomb decodes to this many bytes: eight times the body cap. */
const BOMB_BYTES = 16 * 1024 * 1024;

const encoder = new TextEncoder();

export function toJson(value: Json): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if ("raw" in value) return value.raw;
  return `{${value.obj.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
}

function candidateJson(c: WireCandidateSpec, extra: Array<[string, Json]> = []): Json {
  const fields: Array<[string, Json]> = [["title", c.title], ["locator", c.locator]];
  if (c.snippet !== undefined) fields.push(["snippet", c.snippet]);
  if (c.published_at !== undefined) fields.push(["published_at", c.published_at]);
  if (c.metadata !== undefined) fields.push(["metadata", { obj: c.metadata }]);
  return { obj: [...fields, ...extra] };
}

function answerJson(body: Extract<BodySpec, { kind: "answer" }>): string {
  const m = body.mutation;
  if (m?.m === "body-null") return "null";
  const provider = body.identity && body.identity.field !== "scope" ? body.identity.value : FUZZED;
  const scope = body.identity && body.identity.field !== "provider" ? body.identity.value : FUZZED;
  let candidates: Json[] = body.candidates.map((c) => candidateJson(c));
  const first = body.candidates[0] ?? { title: "First", locator: "https://f.example/first" };
  const replaceFirst = (c: Json) => {
    candidates = [c, ...candidates.slice(1)];
  };
  if (m?.m === "unknown-field" && m.at === "candidate") {
    replaceFirst(candidateJson(first, [[m.name, "x"]]));
  }
  if (m?.m === "title-number") replaceFirst({ obj: [["title", 7], ["locator", first.locator]] });
  if (m?.m === "locator-empty") replaceFirst({ obj: [["title", first.title], ["locator", ""]] });
  if (m?.m === "metadata-array") {
    replaceFirst({
      obj: [["title", first.title], ["locator", first.locator], ["metadata", [1, "two"]]],
    });
  }
  if (m?.m === "metadata-string") {
    replaceFirst({
      obj: [["title", first.title], ["locator", first.locator], ["metadata", "meta"]],
    });
  }
  const fields: Array<[string, Json]> = [
    ["schema_version", m?.m === "wrong-version" ? m.value : "tracefetch.provider-response.v1"],
    ["provider", provider],
    ["scope", scope],
  ];
  if (m?.m === "candidates-object") {
    fields.push(["candidates", { obj: [["0", candidates[0] ?? null]] }]);
  } else if (m?.m !== "missing-candidates") fields.push(["candidates", candidates]);
  if (m?.m === "warnings-numbers") fields.push(["warnings", [1, 2]]);
  else if (body.warnings !== undefined) fields.push(["warnings", body.warnings]);
  if (m?.m === "unknown-field" && m.at === "top") fields.push([m.name, "x"]);
  const text = toJson({ obj: fields });
  return m?.m === "body-array" ? `[${text}]` : text;
}

const HUGE_PREFIX =
  '{"schema_version":"tracefetch.provider-response.v1","provider":"fuzzed","scope":"fuzzed",' +
  '"candidates":[{"title":"Huge","locator":"https://huge.example/1","snippet":"';
const HUGE_SUFFIX = '"}]}';

const cache = new Map<string, Uint8Array>();
function cached(key: string, make: () => Uint8Array): Uint8Array {
  let bytes = cache.get(key);
  if (bytes === undefined) {
    bytes = make();
    cache.set(key, bytes);
  }
  return bytes;
}

/** The body as the provider means it, before any content encoding. */
export function plainBody(body: BodySpec): Uint8Array {
  switch (body.kind) {
    case "answer":
      return encoder.encode(answerJson(body));
    case "error": {
      const fields: Array<[string, Json]> = [["schema_version", body.version], ["code", body.code]];
      if (body.message !== undefined) fields.push(["message", body.message]);
      if (body.retry_after_ms !== undefined) fields.push(["retry_after_ms", body.retry_after_ms]);
      if (body.retryable !== undefined) fields.push(["retryable", body.retryable]);
      return encoder.encode(toJson({ obj: fields }));
    }
    case "invalid-json":
      return encoder.encode(body.text);
    case "invalid-utf8": {
      const title = "invalid bytes follow";
      const json = answerJson({
        kind: "answer",
        candidates: [{ title, locator: "https://f.example/u" }],
      });
      const text = encoder.encode(json);
      // Inside the title (ASCII up to there, so characters are bytes): the bytes are the only fault.
      const at = json.indexOf(title) + (body.at % title.length);
      return Buffer.concat([text.subarray(0, at), Buffer.from(body.bytes), text.subarray(at)]);
    }
    case "empty":
      return new Uint8Array(0);
    case "huge":
      return cached(`huge-${body.bytes}`, () => {
        const fill = body.bytes - HUGE_PREFIX.length - HUGE_SUFFIX.length;
        return encoder.encode(HUGE_PREFIX + "a".repeat(fill) + HUGE_SUFFIX);
      });
  }
}

function compress(codec: Codec, bytes: Uint8Array): Uint8Array {
  switch (codec) {
    case "gzip":
      return gzipSync(bytes, { level: 1 });
    case "deflate":
      return deflateSync(bytes, { level: 1 });
    case "br":
      return brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } });
  }
}

function bodyKey(body: BodySpec): string | null {
  return body.kind === "huge" ? `huge-${body.bytes}` : null;
}

/** What the encoding makes of the body: the bytes sent, and what a client may decode them to. */
function encode(
  a: FuzzAnswer,
  plain: Uint8Array,
): {
  sent: Uint8Array;
  label: string | null;
  decoded: "plain" | "decodes" | "undecodable" | "bomb";
} {
  const e = a.encoding;
  const key = bodyKey(a.body);
  const encoded = (codec: Codec) =>
    key === null ? compress(codec, plain) : cached(`${key}-${codec}`, () => compress(codec, plain));
  switch (e.kind) {
    case "none":
      return { sent: plain, label: null, decoded: "plain" };
    case "label":
      return { sent: plain, label: e.label, decoded: "plain" };
    case "encoded":
      return { sent: encoded(e.codec), label: e.codec, decoded: "decodes" };
    case "mislabelled":
      return { sent: plain, label: e.codec, decoded: "undecodable" };
    case "corrupt": {
      const full = encoded(e.codec);
      return {
        sent: full.subarray(0, Math.floor((full.length * e.keep) / 1000)),
        label: e.codec,
        decoded: "undecodable",
      };
    }
    case "bomb":
      return {
        sent: cached(`bomb-${e.codec}`, () => compress(e.codec, new Uint8Array(BOMB_BYTES))),
        label: e.codec,
        decoded: "bomb",
      };
  }
}

/** Cuts `bytes` at the permille points of `splits` (plus the ends). */
function pieces(bytes: Uint8Array, splits: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(splits.map((s) => Math.floor((bytes.length * s) / 1000)))]
    .filter((c) => c > 0 && c < bytes.length)
    .sort((x, y) => x - y);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(bytes.subarray(from, cut));
    from = cut;
  }
  return out.filter((p) => p.length > 0);
}

function chunked(body: Uint8Array, splits: readonly number[], framing: FramingSpec): Uint8Array {
  const parts: Uint8Array[] = [];
  pieces(body, splits).forEach((piece, i) => {
    const size = framing.kind === "chunk-size-too-big" && i === 0
      ? piece.length + 64
      : piece.length;
    const hex = framing.kind === "chunk-bad-hex" && i === 0 ? "zz" : size.toString(16);
    parts.push(encoder.encode(`${hex}\r\n`), piece);
    if (!(framing.kind === "chunk-missing-crlf" && i === 0)) parts.push(encoder.encode("\r\n"));
  });
  if (framing.kind !== "chunk-no-terminator") parts.push(encoder.encode("0\r\n\r\n"));
  return Buffer.concat(parts);
}

export type Rendered = {
  bytes: Uint8Array;
  /** Where the final status's header block ends (the whole length when there is none). */
  headEnd: number;
  /** Where the bytes stop: the whole length, or the cut of a close, reset or hang. */
  cut: number;
  /** Body bytes after content decoding, when they decode. */
  decodedBytes: number;
  decoded: "plain" | "decodes" | "undecodable" | "bomb";
  plain: Uint8Array;
  /** Separate writes. */
  writes: Uint8Array[];
};

/** Stable across runs: text for statuses a real provider might send. */
const REASONS: Record<number, string> = { 200: "OK", 404: "Not Found", 500: "Internal Error" };

export function render(a: FuzzAnswer): Rendered {
  const plain = plainBody(a.body);
  const { sent, label, decoded } = encode(a, plain);
  // Chunked framing does not exist in HTTP/1.0: an HTTP/1.0 status line only frames by length or close.
  const http10 = a.http10 && (a.framing.kind === "length" || a.framing.kind === "close");
  const version = http10 ? "HTTP/1.0" : "HTTP/1.1";
  let head = "";
  for (const status of a.interim) head += `HTTP/1.1 ${status} Interim\r\n\r\n`;
  let body: Uint8Array = new Uint8Array(0);
  if (a.final === "none") {
    if (a.interim.length === 0) head += "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n";
  } else {
    const lines = [`${version} ${a.final} ${REASONS[a.final] ?? "Fuzz"}`];
    if (a.contentType !== null) lines.push(`content-type: ${a.contentType}`);
    if (label !== null) lines.push(`content-encoding: ${label}`);
    const f = a.framing;
    const isChunked = f.kind === "chunked" || f.kind === "length-and-chunked" ||
      f.kind.startsWith("chunk-");
    body = isChunked ? chunked(sent, a.splits, f) : sent;
    if (isChunked) lines.push("transfer-encoding: chunked");
    if (
      f.kind === "length" || f.kind === "length-and-chunked" || f.kind === "header-without-colon"
    ) {
      lines.push(`content-length: ${sent.length}`);
    }
    if (f.kind === "length-long") lines.push(`content-length: ${sent.length + f.by}`);
    if (f.kind === "length-short") lines.push(`content-length: ${Math.max(0, sent.length - f.by)}`);
    if (f.kind === "two-lengths") {
      lines.push(`content-length: ${sent.length}`, `content-length: ${sent.length + 7}`);
    }
    if (f.kind === "header-without-colon") lines.push("this line has no colon");
    // Every fuzzed answer is the connection's last: a client never sends the next search's request
    // on a socket this server is about to close, so one run's ending cannot change the next's outcome.
    lines.push("connection: close");
    for (const [name, value] of a.headers) lines.push(`${name}: ${value}`);
    head += lines.join("\r\n") + "\r\n\r\n";
  }
  const headBytes = encoder.encode(head);
  const bytes = Buffer.concat([headBytes, body]);
  const cut = a.ending.kind === "end"
    ? bytes.length
    : Math.floor((bytes.length * a.ending.at) / 1000);
  return {
    bytes,
    headEnd: headBytes.length,
    cut,
    decodedBytes: decoded === "bomb" ? BOMB_BYTES : plain.length,
    decoded,
    plain,
    writes: pieces(bytes.subarray(0, cut), a.splits),
  };
}
