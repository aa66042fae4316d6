/**
 * Node's HTTP server as a hostile client meets it: slow senders, oversized and malformed requests.
 * Every answer is an envelope, and a connection that cannot continue is closed with
 * `Connection: close` rather than silently. Node only: Deno and workerd run their own servers
 * (docs/deploy.md lists what reaches the app there).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { servedPeerAddress } from "../src/runtime/launch.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { exchange, open, type RawAnswer, readAnswer } from "./support/raw-http.ts";

const DEADLINE_MS = 1_000;
/** Node checks deadlines once a second; allow that, plus scheduling on a loaded machine. */
const SLACK_MS = 1_500;
const HEALTHY = { title: "Deadline notes", locator: "https://example.org/deadline" };
/** Addresses slow senders connect from, each under its own limit of bodies in reading. */
const SENDERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);

/** A connection from `localAddress` (any of 127.0.0.0/8 is loopback on Linux). */
function openFrom(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress }, () => resolve(socket));
    socket.once("error", reject);
  });
}

function envelopeOf(answer: RawAnswer | null) {
  assert.ok(answer, "the server sent no answer");
  assert.match(answer.headers["content-type"] ?? "", /^application\/json/);
  return assertEnvelope(JSON.parse(answer.body));
}

describe("the Node server: every answer an envelope", { skip: "Deno" in globalThis }, () => {
  let provider: TestServer;
  let server: Listening;

  before(async () => {
    provider = await startServer(answer("notes", "notes", [HEALTHY]));
    const app = gateway([{ name: "notes", endpoint: provider.url }], {
      settings: { bodyTimeoutMs: DEADLINE_MS },
      ports: { peerAddress: servedPeerAddress },
    });
    server = await listen(app.fetch, "127.0.0.1", 0, {
      headersTimeoutMs: DEADLINE_MS,
      bodyTimeoutMs: DEADLINE_MS,
    });
  });
  after(async () => {
    await server.close();
    await provider.close();
  });

  it(`200 slow request bodies from ${SENDERS.length} addresses neither take search slots nor lock callers out; each gets a 408 request_timeout envelope`, async () => {
    const slow: Socket[] = [];
    const answers: Array<Promise<RawAnswer | null>> = [];
    const opened = performance.now();
    for (let i = 0; i < 200; i++) {
      const socket = await openFrom(server.port, SENDERS[i % SENDERS.length] as string);
      slow.push(socket);
      answers.push(readAnswer(socket, DEADLINE_MS * 2 + SLACK_MS * 2));
      const chunked = i % 2 === 1;
      socket.write(
        "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
          (chunked
            ? 'transfer-encoding: chunked\r\n\r\n5\r\n{"que\r\n'
            : 'content-length: 1000\r\n\r\n{"query'),
      );
    }
    try {
      const res = await fetch(
        `http://127.0.0.1:${server.port}/v1/search?q=deadline&timeout_ms=2000`,
      );
      const body = assertEnvelope(await res.json());
      assert.equal(res.status, 200);
      assert.equal(body.code, "ok");
      const posted = await fetch(`http://127.0.0.1:${server.port}/v1/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "deadline", timeout_ms: 2000 }),
      });
      assert.equal(posted.status, 200);
      assert.equal(assertEnvelope(await posted.json()).code, "ok");

      const late = await Promise.all(answers);
      const allowed = performance.now() - opened;
      for (const a of late) {
        const envelope = envelopeOf(a);
        assert.equal(a?.status, 408);
        assert.equal(envelope.code, "request_timeout");
        assert.equal(envelope.action, "retry");
        assert.equal(a?.headers.connection, "close");
      }
      assert.ok(allowed < DEADLINE_MS * 2 + SLACK_MS * 2, `answers took ${allowed} ms`);
    } finally {
      for (const s of slow) s.destroy();
    }
  });

  it("headers that never finish get a 408 request_timeout envelope within the header deadline", async () => {
    const a = await exchange(
      server.port,
      "GET /v1/status HTTP/1.1\r\nhost: 127.0.0.1\r\n",
      DEADLINE_MS + SLACK_MS * 2,
    );
    assert.equal(a?.status, 408);
    assert.equal(envelopeOf(a).code, "request_timeout");
    assert.ok((a?.elapsedMs ?? Infinity) < DEADLINE_MS + SLACK_MS * 2);
    assert.equal(a?.headers.connection, "close");
  });

  it("a 413 says Connection: close and closes, so no later request on it is lost", async () => {
    const declared = await exchange(
      server.port,
      "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
        "content-length: 2000000\r\n\r\n{",
    );
    assert.equal(declared?.status, 413);
    assert.equal(envelopeOf(declared).code, "body_too_large");
    assert.equal(declared?.headers.connection, "close");
    assert.equal(declared?.closed, true);

    const socket = await open(server.port);
    try {
      const answered = readAnswer(socket, 5_000);
      socket.write(
        "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
          "transfer-encoding: chunked\r\n\r\n",
      );
      const chunk = "x".repeat(65_536);
      for (let i = 0; i < 20 && !socket.destroyed; i++) {
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      }
      const streamed = await answered;
      assert.equal(streamed?.status, 413);
      assert.equal(streamed?.headers.connection, "close");
    } finally {
      socket.destroy();
    }
  });

  const malformed: Array<[string, string | Buffer, number, string]> = [
    [
      "a query string over 16 KiB",
      `GET /v1/search?q=${"a".repeat(17_000)} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`,
      431,
      "headers_too_large",
    ],
    [
      "a header over 16 KiB",
      `GET /v1/status HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${"b".repeat(17_000)}\r\n\r\n`,
      431,
      "headers_too_large",
    ],
    [
      "a raw 0xFF in the request line",
      Buffer.concat([
        Buffer.from("GET /v1/st"),
        Buffer.from([0xff]),
        Buffer.from("atus HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"),
      ]),
      400,
      "bad_request",
    ],
    [
      "a NUL in the request line",
      "GET /v1/st\u0000atus HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
      400,
      "bad_request",
    ],
    [
      "a bare LF in a header",
      "GET /v1/status HTTP/1.1\r\nhost: 127.0.0.1\nx-a: b\r\n\r\n",
      400,
      "bad_request",
    ],
    ["a bad Host", "GET /v1/status HTTP/1.1\r\nhost: a b@c\r\n\r\n", 400, "bad_request"],
    ["a missing Host", "GET /v1/status HTTP/1.1\r\n\r\n", 400, "bad_request"],
    [
      "both Transfer-Encoding and Content-Length",
      "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
      "content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
      400,
      "bad_request",
    ],
    ["OPTIONS *", "OPTIONS * HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n", 400, "bad_request"],
    [
      "an unknown method",
      "FROB /v1/status HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
      400,
      "bad_request",
    ],
    [
      "a backslash in the path",
      "GET /v1\\status HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
      400,
      "bad_request",
    ],
    [
      "CONNECT",
      "CONNECT example.org:443 HTTP/1.1\r\nhost: example.org:443\r\n\r\n",
      405,
      "method_not_allowed",
    ],
  ];
  for (const [name, bytes, status, code] of malformed) {
    it(`${name} gets a ${status} ${code} envelope`, async () => {
      const a = await exchange(server.port, bytes);
      assert.equal(a?.status, status, `got ${a?.status}: ${a?.body}`);
      assert.equal(envelopeOf(a).code, code);
    });
  }

  it("the server keeps serving after every malformed request", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/status`);
    assert.equal(res.status, 200);
    assert.equal(assertEnvelope(await res.json()).code, "ok");
  });
});
