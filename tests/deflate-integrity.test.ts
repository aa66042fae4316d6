/**
 * A `Content-Encoding: deflate` answer is used only when its zlib stream decodes whole: a stream
 * with a damaged byte, one that stops before its end (inside the data or the Adler-32 trailer) and
 * one followed by bytes past its end are each refused as invalid_encoding, with or without a
 * declared length, on every runtime; a complete stream is read however it is split on the wire,
 * and a connection lost inside one is still a lost connection.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { deflateSync } from "node:zlib";
import type { Handler } from "./support/servers.ts";
import { sleep } from "./support/servers.ts";
import {
  assertFailed,
  faultySearch,
  HEALTHY,
  LEAKY_HEADERS,
  responseBody,
} from "./support/outcomes.ts";

/** Each search is bounded by the faulty provider's 2 s timeout; this bounds the case around it. */
const CASE = { timeout: 20_000 };

const ANSWER = deflateSync(responseBody("faulty", [HEALTHY]));
/** An honest empty answer: a cut stream must not pass for "the provider found nothing". */
const EMPTY = deflateSync(responseBody("faulty", []));
/** zlib's trailer: the Adler-32 of the decoded bytes (RFC 1950 section 2.2). */
const TRAILER_BYTES = 4;

type Framing = "length" | "chunked";

/** Sends `pieces` as separate writes, labelled deflate, framed by a declared length or chunked. */
function deflated(pieces: Uint8Array[], framing: Framing): Handler {
  return async (_req, res: ServerResponse) => {
    const total = pieces.reduce((n, p) => n + p.byteLength, 0);
    res.writeHead(200, {
      "content-type": "application/json",
      "content-encoding": "deflate",
      ...(framing === "length" ? { "content-length": String(total) } : {}),
      ...LEAKY_HEADERS,
    });
    for (const piece of pieces) {
      res.write(piece);
      await sleep(5);
    }
    res.end();
  };
}

const refused = { outcome: "provider_protocol_error", code: "invalid_encoding", retryable: false };

describe("a deflate answer is used only when its zlib stream decodes whole", () => {
  for (const framing of ["length", "chunked"] as const) {
    it(`a complete stream split across writes is read (${framing})`, CASE, async () => {
      const pieces = [ANSWER.subarray(0, 1), ANSWER.subarray(1, 9), ANSWER.subarray(9, -3)];
      for (let at = ANSWER.byteLength - 3; at < ANSWER.byteLength; at++) {
        pieces.push(ANSWER.subarray(at, at + 1));
      }
      const run = await faultySearch(deflated(pieces, framing));
      assert.equal(run.attempt.outcome, "success", JSON.stringify(run.attempt));
      assert.equal(run.attempt.candidate_count, 1);
      assert.equal(run.attempt.candidates[0].title, HEALTHY.title);
    });

    it(`a damaged byte inside the stream is invalid_encoding (${framing})`, CASE, async () => {
      const damaged = Uint8Array.from(ANSWER);
      const at = ANSWER.byteLength >> 1;
      damaged[at] = (damaged[at] as number) ^ 0xff;
      assertFailed(await faultySearch(deflated([damaged], framing)), refused);
    });

    it(`a stream cut inside its data is invalid_encoding (${framing})`, CASE, async () => {
      const cut = ANSWER.subarray(0, ANSWER.byteLength - TRAILER_BYTES - 2);
      assertFailed(await faultySearch(deflated([cut], framing)), refused);
    });

    for (let missing = 1; missing <= TRAILER_BYTES; missing++) {
      it(
        `a stream missing ${missing} trailer byte(s) is invalid_encoding (${framing})`,
        CASE,
        async () => {
          const cut = ANSWER.subarray(0, ANSWER.byteLength - missing);
          assertFailed(await faultySearch(deflated([cut], framing)), refused);
        },
      );
    }

    it(
      `a cut empty answer is invalid_encoding, not an honest empty (${framing})`,
      CASE,
      async () => {
        const cut = EMPTY.subarray(0, Math.floor(EMPTY.byteLength * 0.95));
        assertFailed(await faultySearch(deflated([cut], framing)), refused);
      },
    );

    it(`bytes past the end of the stream are invalid_encoding (${framing})`, CASE, async () => {
      const garbage = new Uint8Array([0x13, 0x37, 0xde, 0xad, 0xbe, 0xef]);
      assertFailed(await faultySearch(deflated([ANSWER, garbage], framing)), refused);
      assertFailed(
        await faultySearch(deflated([new Uint8Array([...ANSWER, ...garbage])], framing)),
        refused,
      );
    });
  }

  it(
    "a connection lost inside a deflate body is still search_failed/connection_lost",
    CASE,
    async () => {
      const long = deflateSync(responseBody("faulty", [HEALTHY], { padding: "x".repeat(20_000) }));
      const run = await faultySearch(async (_req, res) => {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-encoding": "deflate",
          "content-length": String(long.byteLength),
          ...LEAKY_HEADERS,
        });
        res.write(long.subarray(0, long.byteLength >> 1));
        await sleep(50);
        res.destroy();
      });
      assertFailed(run, { outcome: "search_failed", code: "connection_lost", retryable: true });
    },
  );
});
