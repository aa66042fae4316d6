/**
 * Faults a hostile or broken provider can cause beyond the outcome table: bodiless and interim
 * statuses, error bodies with one bad field, waits too long to honour, metadata that is not an
 * object, bodies that do not decode as labelled, and caller tokens issued in the future.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer as createNetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { deflateSync, gzipSync } from "node:zlib";
import { SignJWT } from "jose";
import { gateway, search } from "./support/gateway.ts";
import { answer, type Handler, startServer } from "./support/servers.ts";
import {
  assertFailed,
  faultySearch,
  HEALTHY,
  LEAKY_HEADERS,
  responseBody,
} from "./support/outcomes.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";
import { classifyStatus } from "../src/transport/classify-status.ts";
import { parseRetryAfter } from "../src/io/retry-after.ts";
import { MAX_PROVIDER_WAIT_MS } from "../src/protocol/limits.ts";
import { CLOCK_TOLERANCE_SECONDS, createCallerVerifier } from "../src/auth/verify-caller.ts";

const isDeno = "Deno" in globalThis;
const ERROR_VERSION = "tracefetch.provider-error.v1";

function reply(status: number, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const handler: Handler = (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...LEAKY_HEADERS, ...headers });
    res.end(body);
  };
  return handler;
}

/**
 * A provider that speaks raw HTTP/1.1 over node:net, so a test can send what node:http refuses to
 * (interim 1xx answers, a bare status line). `respond` runs once the whole request has arrived.
 */
async function rawProvider(respond: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = received.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? "0");
      if (received.byteLength < end + 4 + length) return;
      received = Buffer.alloc(0);
      respond(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/search`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("provider hardening: bodiless and interim answers", () => {
  // An 'error' event nobody listens for kills a Node process; node:test would report it too, but
  // counting makes the assertion explicit. Deno's fetch is not the Node client: nothing to count.
  let uncaught = 0;
  const count = () => {
    uncaught++;
  };
  before(() => {
    if (!isDeno) process.on("uncaughtException", count);
  });
  after(() => {
    if (!isDeno) process.off("uncaughtException", count);
  });

  const cases: Array<[number, string]> = [
    [204, "invalid_json"],
    [205, "invalid_json"],
    [304, "redirect"],
  ];
  for (const [status, code] of cases) {
    it(`a provider answering ${status} is provider_protocol_error/${code}, the process survives and the next search succeeds`, async () => {
      let calls = 0;
      const server = await startServer((req, res, body) => {
        calls++;
        if (calls === 1) {
          res.writeHead(status);
          res.end();
          return;
        }
        return answer("faulty", "faulty", [HEALTHY])(req, res, body);
      });
      try {
        const app = gateway([{ name: "faulty", endpoint: server.url, timeout_seconds: 2 }]);
        const first = await search(app);
        const [attempt] = first.body.result.candidates;
        assert.deepEqual(
          { outcome: attempt.outcome, code: attempt.code, retryable: attempt.retryable },
          { outcome: "provider_protocol_error", code, retryable: false },
          JSON.stringify(attempt),
        );
        if (status !== 304) {
          assert.equal(attempt.message, `the provider answered HTTP ${status}, which has no body`);
        }
        // The body's teardown happens a tick or two after the answer: give it the time to fail.
        await new Promise((resolve) => setTimeout(resolve, 50));
        const second = await search(app);
        assert.equal(second.body.code, "ok");
        assert.equal(second.body.result.candidates[0].outcome, "success");
        assert.equal(calls, 2);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(uncaught, 0, "an uncaught exception happened");
      } finally {
        await server.close();
      }
    });
  }

  it("a compressed body cancelled unread (wrong content type) is torn down without an uncaught error", async () => {
    const gz = gzipSync(responseBody("faulty", [HEALTHY], { padding: "x".repeat(200_000) }));
    const run = await faultySearch(
      reply(200, gz, { "content-type": "text/html", "content-encoding": "gzip" }),
    );
    assertFailed(run, {
      outcome: "provider_protocol_error",
      code: "wrong_content_type",
      retryable: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(uncaught, 0, "an uncaught exception happened");
  });

  /** Interim answers with `codes`, then a final 200 carrying a valid answer. */
  const interimThenAnswer = (codes: string[]) => (socket: Socket) => {
    const body = responseBody("faulty", [HEALTHY]);
    socket.write(codes.map((code) => `HTTP/1.1 ${code}\r\n\r\n`).join(""));
    setTimeout(() => {
      socket.end(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n" +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }, 20);
  };

  it("interim 102 and 103 answers before the final 200 are read past: the answer succeeds", async () => {
    const provider = await rawProvider(interimThenAnswer(["102 Processing", "103 Early Hints"]));
    try {
      const run = await faultySearch({ endpoint: provider.url });
      assert.equal(run.body.code, "ok", JSON.stringify(run.attempt));
      assert.equal(run.attempt.outcome, "success");
      assert.equal(run.attempt.candidate_count, 1);
    } finally {
      await provider.close();
    }
  });

  // RFC 9110 section 15.2 asks a client to read past any 1xx. Deno's client does; undici, Node's
  // client, refuses a 100 it did not ask for (it never sends Expect) and drops the connection.
  it(
    isDeno
      ? "an unasked-for 100 Continue before the final 200 is read past: the answer succeeds"
      : "an unasked-for 100 Continue is refused by the Node client: adapter_unavailable/connection_reset, and nothing crashes",
    async () => {
      const provider = await rawProvider(interimThenAnswer(["100 Continue"]));
      try {
        const run = await faultySearch({ endpoint: provider.url });
        if (isDeno) {
          assert.equal(run.body.code, "ok", JSON.stringify(run.attempt));
          assert.equal(run.attempt.candidate_count, 1);
        } else {
          assertFailed(run, {
            outcome: "adapter_unavailable",
            code: "connection_reset",
            retryable: true,
          });
          await new Promise((resolve) => setTimeout(resolve, 50));
          assert.equal(uncaught, 0, "an uncaught exception happened");
        }
      } finally {
        await provider.close();
      }
    },
  );

  it("a provider sending only 102 Processing and closing is adapter_unavailable/connection_reset", async () => {
    const provider = await rawProvider((socket) => {
      socket.end("HTTP/1.1 102 Processing\r\n\r\n");
    });
    try {
      const run = await faultySearch({ endpoint: provider.url });
      assertFailed(run, {
        outcome: "adapter_unavailable",
        code: "connection_reset",
        retryable: true,
      });
    } finally {
      await provider.close();
    }
  });
});

describe("provider hardening: an error body is read field by field", () => {
  const errorBody = (fields: Record<string, unknown>) =>
    JSON.stringify({ schema_version: ERROR_VERSION, ...fields });

  for (const bad of [-1, 1.5, "10"]) {
    it(`retry_after_ms ${JSON.stringify(bad)} is dropped; the body's code and message are kept`, async () => {
      const run = await faultySearch(
        reply(503, errorBody({ code: "rate_limited", message: "slow down", retry_after_ms: bad })),
      );
      assertFailed(run, { outcome: "search_failed", code: "rate_limited", retryable: true });
      assert.equal(run.attempt.message, "the provider is rate limiting (HTTP 503): slow down");
    });
  }

  it("a dropped retry_after_ms leaves the Retry-After header to decide the wait", async () => {
    const run = await faultySearch(
      reply(503, errorBody({ code: "rate_limited", retry_after_ms: -5 }), { "retry-after": "2" }),
    );
    assertFailed(run, {
      outcome: "search_failed",
      code: "rate_limited",
      retryable: true,
      retry_after_ms: 2000,
    });
  });

  it("a message that is not a string is dropped; the body's code is kept", async () => {
    const run = await faultySearch(reply(500, errorBody({ code: "invalid_request", message: 42 })));
    assertFailed(run, { outcome: "search_failed", code: "invalid_request", retryable: false });
    assert.equal(run.attempt.message, "the provider refused the request (HTTP 500)");
  });

  it("an unknown code leaves the status to decide, and the message is still shown", async () => {
    const run = await faultySearch(reply(400, errorBody({ code: "teapot", message: "nope" })));
    assertFailed(run, { outcome: "search_failed", code: "search_failed", retryable: false });
    assert.equal(run.attempt.message, "the provider answered HTTP 400: nope");
  });
});

describe("provider hardening: a provider's wait is capped", () => {
  it("retry_after_ms 1e308 in an error body reaches the caller as MAX_PROVIDER_WAIT_MS", async () => {
    const run = await faultySearch(
      reply(
        429,
        `{"schema_version":"${ERROR_VERSION}","code":"rate_limited","retry_after_ms":1e308}`,
      ),
    );
    assertFailed(run, {
      outcome: "search_failed",
      code: "rate_limited",
      retryable: true,
      retry_after_ms: MAX_PROVIDER_WAIT_MS,
    });
  });

  for (const header of ["99999999999999999999999", "9".repeat(400)]) {
    it(`Retry-After of ${header.length} digits reaches the caller as MAX_PROVIDER_WAIT_MS`, async () => {
      const run = await faultySearch(reply(429, "", { "retry-after": header }));
      assertFailed(run, {
        outcome: "search_failed",
        code: "rate_limited",
        retryable: true,
        retry_after_ms: MAX_PROVIDER_WAIT_MS,
      });
    });
  }

  it("a Retry-After HTTP-date in the past is a wait of 0", async () => {
    const past = new Date(Date.now() - 3_600_000).toUTCString();
    const run = await faultySearch(reply(503, "", { "retry-after": past }));
    assertFailed(run, {
      outcome: "search_failed",
      code: "search_failed",
      retryable: true,
      retry_after_ms: 0,
    });
  });

  it("MAX_PROVIDER_WAIT_MS is one hour", () => {
    assert.equal(MAX_PROVIDER_WAIT_MS, 3_600_000);
  });

  it("parseRetryAfter never overflows: any number of digits is a safe integer of milliseconds", () => {
    const now = Date.UTC(2026, 0, 1);
    assert.equal(parseRetryAfter("3", now), 3000);
    assert.equal(parseRetryAfter(" 0003 ", now), 3000);
    assert.equal(parseRetryAfter(`${"0".repeat(50)}7`, now), 7000);
    for (const digits of ["99999999999999999999999", "9".repeat(400)]) {
      const ms = parseRetryAfter(digits, now);
      assert.ok(ms !== null && Number.isSafeInteger(ms) && ms >= MAX_PROVIDER_WAIT_MS, String(ms));
    }
  });

  it("parseRetryAfter reads an HTTP-date relative to now and refuses what is neither form", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(parseRetryAfter("Thu, 01 Jan 2026 12:00:30 GMT", now), 30_000);
    assert.equal(parseRetryAfter("Thu, 01 Jan 2026 11:00:00 GMT", now), 0);
    for (const junk of ["-1", "1.5", "2026-01-01T12:00:30Z", "soon", ""]) {
      assert.equal(parseRetryAfter(junk, now), null, junk);
    }
  });

  it("an in-process adapter's wait is capped as well", () => {
    const failure = classifyStatus(429, { code: "rate_limited", retry_after_ms: 1e12 }, null);
    assert.equal(failure.retry_after_ms, MAX_PROVIDER_WAIT_MS);
  });
});

describe("provider hardening: metadata is a JSON object", () => {
  it("an array as metadata is schema_violation naming the field, never an object keyed by index", async () => {
    const run = await faultySearch(
      reply(200, responseBody("faulty", [{ ...HEALTHY, metadata: [1, 2] }])),
    );
    assertFailed(run, {
      outcome: "provider_protocol_error",
      code: "schema_violation",
      retryable: false,
    });
    assert.ok(run.attempt.message.includes("candidates.0.metadata"), run.attempt.message);
  });
});

describe("provider hardening: a body that does not decode as labelled", () => {
  it("a valid zlib body labelled content-encoding deflate is read, on every runtime", async () => {
    const run = await faultySearch(
      reply(200, deflateSync(responseBody("faulty", [HEALTHY])), { "content-encoding": "deflate" }),
    );
    assert.equal(run.attempt.outcome, "success", JSON.stringify(run.attempt));
    assert.equal(run.attempt.candidate_count, 1);
  });

  // Deno's fetch does not decode deflate (the gateway inflates what still opens with a zlib
  // header): bytes that are no zlib stream arrive as sent and fail as what they are, not UTF-8.
  const expectedFor = (encoding: string) =>
    isDeno && encoding === "deflate" ? "invalid_utf8" : "invalid_encoding";
  const garbage = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0xff, 0x00, 0x13, 0x37, 0xfe, 0xed]);

  for (const encoding of ["gzip", "deflate", "br"]) {
    it(`a body labelled content-encoding ${encoding} that is not ${encoding} is provider_protocol_error`, async () => {
      const run = await faultySearch(reply(200, garbage, { "content-encoding": encoding }));
      assertFailed(run, {
        outcome: "provider_protocol_error",
        code: expectedFor(encoding),
        retryable: false,
      });
    });
  }

  it("an error status whose body does not decode is decided by the status (503: retryable)", async () => {
    const run = await faultySearch(reply(503, garbage, { "content-encoding": "gzip" }));
    assertFailed(run, { outcome: "search_failed", code: "search_failed", retryable: true });
  });

  it("a gzip body cut short by the provider (the response itself complete) is invalid_encoding", async () => {
    const gz = gzipSync(responseBody("faulty", [HEALTHY]));
    const run = await faultySearch(
      reply(200, gz.subarray(0, gz.byteLength - 12), { "content-encoding": "gzip" }),
    );
    assertFailed(run, {
      outcome: "provider_protocol_error",
      code: "invalid_encoding",
      retryable: false,
    });
  });

  it("a connection lost in the middle of a gzip body is still search_failed/connection_lost", async () => {
    const gz = gzipSync(responseBody("faulty", [HEALTHY], { padding: "x".repeat(20_000) }));
    const run = await faultySearch((_req, res) => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        ...LEAKY_HEADERS,
      });
      res.write(gz.subarray(0, gz.byteLength >> 1));
      setTimeout(() => res.destroy(), 50);
    });
    assertFailed(run, { outcome: "search_failed", code: "connection_lost", retryable: true });
  });
});

describe("provider hardening: caller tokens issued in the future", () => {
  const secret = new TextEncoder().encode("a-test-secret-of-at-least-32-bytes!!");
  const verify = createCallerVerifier(
    {
      sources: [{ kind: "secret", secret }],
      issuer: ISSUER,
      audience: AUDIENCE,
    },
    fetch,
  )!;
  const mint = (iat: number) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: "alice", iat, exp: now + 7200 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(secret);
  };
  const now = () => Math.floor(Date.now() / 1000);

  it("a token whose iat is an hour ahead is token_invalid", async () => {
    const verdict = await verify(await mint(now() + 3600));
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.code, "token_invalid");
  });

  it("a token whose iat is ahead by less than the clock tolerance is accepted", async () => {
    const verdict = await verify(await mint(now() + CLOCK_TOLERANCE_SECONDS - 10));
    assert.equal(verdict.ok, true, JSON.stringify(verdict));
  });
});
