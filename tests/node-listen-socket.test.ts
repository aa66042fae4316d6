/**
 * Node's HTTP server when a client error (a request Node's parser gives up on) arrives on a socket
 * that has carried, or still carries, a response (src/runtime/node-listen.ts): a response under
 * way is never corrupted by an envelope written into it; once every response on the socket has
 * finished, the error gets its envelope with `Connection: close`. Node only, as
 * tests/node-server.test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { assertEnvelope } from "./support/gateway.ts";
import { open } from "./support/raw-http.ts";

/** A request line Node's parser refuses (HPE_INVALID_METHOD), which raises `clientError`. */
const MALFORMED = "FROB /v1/status HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
const STREAM = "GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
const OK = "GET /ok HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
const HOLD = "GET /hold HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";

/** What a socket receives, and whether the server has closed it. */
type Received = {
  text: () => string;
  closed: Promise<void>;
  /** Resolves once what arrived satisfies `test`; rejects after `timeoutMs`. */
  until: (test: (text: string) => boolean, timeoutMs?: number) => Promise<string>;
};

function receive(socket: Socket): Received {
  let data = "";
  const waiting = new Set<() => void>();
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    data += chunk;
    for (const check of waiting) check();
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    text: () => data,
    closed,
    until: (test, timeoutMs = 3_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!test(data)) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve(data);
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`timed out; received ${JSON.stringify(data)}`));
        }, timeoutMs);
        waiting.add(check);
        check();
      }),
  };
}

function within(promise: Promise<void>, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const statusLines = (text: string) => text.match(/HTTP\/1\.1 \d{3} /g) ?? [];

describe("the Node server: a client error on a socket with a response", {
  skip: "Deno" in globalThis,
}, () => {
  let server: Listening;
  /** Ends every streamed body still open. */
  const releases = new Set<() => void>();

  before(async () => {
    server = await listen((request) => {
      const path = new URL(request.url).pathname;
      if (path === "/hold") {
        // An answer not begun until the test lets it.
        return new Promise<Response>((resolve) => {
          releases.add(() => resolve(new Response("held")));
        });
      }
      if (path !== "/stream") {
        return new Response("ok", { headers: { "content-type": "text/plain" } });
      }
      // A body that begins at once and ends only when the test lets it.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("first part;"));
          releases.add(() => {
            try {
              controller.enqueue(new TextEncoder().encode("last part"));
              controller.close();
            } catch {
              // Already cancelled: the socket is gone.
            }
          });
        },
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    });
  });
  after(async () => {
    for (const release of releases) release();
    await server.close();
  });

  it("a response already begun is only closed, never written into, by a later client error", async () => {
    const socket = await open(server.port);
    const received = receive(socket);
    try {
      socket.write(STREAM);
      await received.until((text) => text.includes("first part;"));
      socket.write(MALFORMED);
      await within(received.closed, 3_000, "the server closed the socket");
      const text = received.text();
      assert.match(text, /^HTTP\/1\.1 200 /);
      assert.deepEqual(statusLines(text), ["HTTP/1.1 200 "], `received ${JSON.stringify(text)}`);
      assert.doesNotMatch(text, /bad_request/);
    } finally {
      socket.destroy();
    }
  });

  it("nor is one begun with another, not begun yet, pipelined behind it", async () => {
    const socket = await open(server.port);
    const received = receive(socket);
    try {
      socket.write(STREAM);
      await received.until((text) => text.includes("first part;"));
      // The second request's answer, not begun, is queued behind the first; the error follows.
      socket.write(HOLD + MALFORMED);
      await within(received.closed, 3_000, "the server closed the socket");
      const text = received.text();
      assert.deepEqual(statusLines(text), ["HTTP/1.1 200 "], `received ${JSON.stringify(text)}`);
      assert.doesNotMatch(text, /bad_request/);
    } finally {
      socket.destroy();
    }
  });

  it("after a finished response on a kept-alive socket, a client error still gets its envelope", async () => {
    const socket = await open(server.port);
    const received = receive(socket);
    try {
      socket.write(OK);
      await received.until((text) => /\r\n\r\n(2\r\n)?ok/.test(text));
      assert.equal(socket.destroyed, false, "the first answer kept the connection open");
      // Let Node finish the first response before the next request arrives.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = received.text().length;
      socket.write(MALFORMED);
      await within(received.closed, 3_000, "the server closed the socket");
      const refusal = received.text().slice(before);
      assert.match(refusal, /^HTTP\/1\.1 400 /);
      assert.match(refusal, /\r\nconnection: close\r\n/i);
      const envelope = assertEnvelope(JSON.parse(refusal.slice(refusal.indexOf("\r\n\r\n") + 4)));
      assert.equal(envelope.code, "bad_request");
    } finally {
      socket.destroy();
    }
  });
});
