/**
 * On Workers the client address is CF-Connecting-IP, which Cloudflare's edge sets (Miniflare too,
 * unless a test sends its own): one address at its limit of bodies in reading locks out only
 * itself. An IPv6 peer counts by its /64 and, behind TRACEFETCH_TRUSTED_PROXIES, the client is
 * the one X-Forwarded-For names: both judged by the full rules, a module loaded on demand.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { MAX_BODIES_IN_READ_PER_CLIENT } from "../../src/protocol/admission-limits.ts";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

/** The held bodies' deadline: they end by themselves soon after the test has seen what it needs. */
const BODY_TIMEOUT_MS = 2_000;

describe("the worker counts bodies in reading by CF-Connecting-IP", () => {
  let provider: TestServer;
  let mf: Miniflare;

  before(async () => {
    provider = await startServer(answer("a", "a", [{ title: "A", locator: "https://a.example/" }]));
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([{ name: "a", endpoint: provider.url }])),
      TRACEFETCH_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      TRACEFETCH_TRUSTED_PROXIES: "192.0.2.0/24",
    });
  });
  after(async () => {
    await mf?.dispose();
    await provider?.close();
  });

  /** A search from `ip`, relayed for `forwardedFor` when given. */
  const post = (ip: string, body: BodyInit, forwardedFor?: string) =>
    mf.dispatchFetch("http://gateway.test/v1/search", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "cf-connecting-ip": ip,
        ...(forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }),
      },
      body: body as never,
      duplex: "half",
    });

  /** A body that never ends (until the body deadline): it holds its client's place in reading. */
  const endless = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"query":'));
      },
    });

  /**
   * Holds every place in reading of the client `hold` names, then sends one search as `same`
   * (refused when it is the same client) and one as `other` (served).
   */
  async function lockOut(
    hold: [ip: string, forwardedFor?: string],
    same: [ip: string, forwardedFor?: string],
    other: [ip: string, forwardedFor?: string],
  ) {
    const held = Array.from(
      { length: MAX_BODIES_IN_READ_PER_CLIENT },
      () => post(hold[0], endless(), hold[1]),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = await post(same[0], '{"query":"a"}', same[1]);
      assert.equal(refused.status, 429);
      assert.equal(assertEnvelope(await refused.json()).code, "overloaded");
      const served = await post(other[0], '{"query":"a"}', other[1]);
      assert.equal(served.status, 200);
      assert.equal(assertEnvelope(await served.json()).code, "ok");
    } finally {
      for (const res of await Promise.all(held)) await res.body?.cancel();
    }
  }

  it("an address at its limit of bodies in reading is refused 429 overloaded; another address is served", async () => {
    await lockOut(["203.0.113.7"], ["203.0.113.7"], ["203.0.113.8"]);
  });

  it("an IPv6 address counts by its /64: another address in it is refused, the next /64 served", async () => {
    await lockOut(["2001:db8:1:2::7"], ["2001:db8:1:2:ffff::1"], ["2001:db8:1:3::7"]);
  });

  it("behind a trusted proxy the client is the one X-Forwarded-For names, through any of the proxies", async () => {
    await lockOut(
      ["192.0.2.1", "198.51.100.7"],
      ["192.0.2.2", "198.51.100.7"],
      ["192.0.2.1", "198.51.100.8"],
    );
  });
});
