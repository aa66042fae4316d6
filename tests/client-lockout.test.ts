/**
 * No caller can lock others out, over real sockets on the gateway as `npm start` (Node) and
 * `deno task dev` (Deno) serve it: slow bodies held open from one address cost that address its
 * places, not anyone else's, and a body a little over the cap gets its 413 even from a client that
 * reads only once it has sent.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { readSettings } from "../src/config/settings.ts";
import { MAX_REQUEST_BODY_BYTES } from "../src/protocol/limits.ts";
import { MAX_BODIES_IN_READ_PER_CLIENT } from "../src/protocol/admission-limits.ts";
import { assertEnvelope } from "./support/gateway.ts";
import { type RawAnswer, readAnswer } from "./support/raw-http.ts";
import { rpc } from "./support/mcp.ts";
import { MCP_TOOL_NAMES } from "../src/protocol/mcp-tools.ts";
import { isDeno, runtimeListen } from "./support/runtime-listen.ts";

/** The slow bodies one address holds open: more than the gateway used to allow in all. */
const SLOW_BODIES = 256;
/** What a caller from another address may wait for an answer. */
const ANSWER_MS = 2_000;

/** A connection to the gateway from `localAddress` (any of 127.0.0.0/8 is loopback on Linux). */
function openFrom(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves once `count` of the answers have arrived, or after `ms` with those that have. */
function firstAnswers(
  answers: Array<Promise<RawAnswer | null>>,
  count: number,
  ms: number,
): Promise<RawAnswer[]> {
  const arrived: RawAnswer[] = [];
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(arrived), ms);
    for (const answer of answers) {
      void answer.then((a) => {
        if (a === null) return;
        arrived.push(a);
        if (arrived.length === count) {
          clearTimeout(timer);
          resolve(arrived);
        }
      });
    }
  });
}

/**
 * Sends a POST whose body is `size` bytes in 64 KiB writes and reads nothing until all is sent,
 * as a client that reads only once it has sent: an answer it was sent before a reset is lost.
 */
async function sendThenRead(port: number, size: number): Promise<RawAnswer | string> {
  const socket = await openFrom(port, "127.0.0.1");
  try {
    socket.pause();
    const write = (data: string | Uint8Array) =>
      new Promise<void>((resolve, reject) =>
        socket.write(data, (error) => error ? reject(error) : resolve())
      );
    await write(
      "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
        `content-length: ${size}\r\n\r\n`,
    );
    const body = new Uint8Array(size).fill(0x20);
    for (let at = 0; at < size; at += 65_536) {
      await write(body.subarray(at, at + 65_536));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const answered = readAnswer(socket, 5_000);
    socket.resume();
    return await answered ?? "no answer";
  } catch (error) {
    return `failed while sending: ${(error as NodeJS.ErrnoException).code ?? error}`;
  } finally {
    socket.destroy();
  }
}

describe(`no caller can lock others out, on ${isDeno ? "Deno" : "Node"}`, () => {
  let gateway: Launched;
  let port: number;

  before(async () => {
    gateway = await launch(
      readSettings({
        PORT: "0",
        TRACEFETCH_DESCRIBE_PROVIDERS: "off",
        // Longer than opening the 256 slow bodies takes on a loaded machine (it took over 3 s on
        // two cores running three suites), so none of them times out before the refusals are read.
        TRACEFETCH_BODY_TIMEOUT_MS: "10000",
      }),
      runtimeListen,
      isDeno ? {} : nodePorts(),
    );
    port = Number(new URL(gateway.url).port);
  });
  after(() => gateway?.close());

  it(`with ${SLOW_BODIES} slow bodies held open from 127.0.0.2, a search and an MCP tools/list from 127.0.0.1 answer 200 within ${ANSWER_MS} ms`, async () => {
    const slow: Socket[] = [];
    const answers: Array<Promise<RawAnswer | null>> = [];
    try {
      for (let i = 0; i < SLOW_BODIES; i++) {
        const socket = await openFrom(port, "127.0.0.2");
        slow.push(socket);
        answers.push(readAnswer(socket, 5_000));
        socket.write(
          "POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
            'content-length: 1000\r\n\r\n{"q',
        );
      }
      // The address's places are full: every slow body past them is refused at once.
      const past = SLOW_BODIES - MAX_BODIES_IN_READ_PER_CLIENT;
      const refused = await firstAnswers(answers, past, 3_000);
      assert.equal(refused.length, past, "slow bodies refused at once");
      for (const a of refused) {
        assert.equal(a.status, 429);
        assert.equal(assertEnvelope(JSON.parse(a.body)).code, "overloaded");
      }

      const started = performance.now();
      const searched = await fetch(`${gateway.url}/v1/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "deadline" }),
        signal: AbortSignal.timeout(ANSWER_MS),
      });
      assert.equal(searched.status, 200);
      assert.equal(assertEnvelope(await searched.json()).code, "ok");
      assert.ok(performance.now() - started < ANSWER_MS);

      const listedAt = performance.now();
      const listed = await rpc(new URL("/mcp", gateway.url), {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
      });
      assert.equal(listed.status, 200);
      const { result } = await listed.json() as { result: { tools: unknown[] } };
      assert.equal(result.tools.length, MCP_TOOL_NAMES.length);
      assert.ok(performance.now() - listedAt < ANSWER_MS);
    } finally {
      for (const socket of slow) socket.destroy();
    }
  });

  it("10 of 10 bodies of 1 MiB + 1 byte get their 413 envelope, sent by a client that reads only once it has sent", async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await sendThenRead(port, MAX_REQUEST_BODY_BYTES + 1);
      assert.ok(typeof answer !== "string", `try ${i + 1}: ${answer}`);
      assert.equal(answer.status, 413, `try ${i + 1}`);
      assert.equal(assertEnvelope(JSON.parse(answer.body)).code, "body_too_large");
    }
  });
});
