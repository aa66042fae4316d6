/**
 * Route edges: HEAD never searches, every 405 names what is allowed, one spelling per route, and
 * a slow POST body neither takes a search slot nor outlives its deadline.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { keyPair } from "./support/auth-keys.ts";

describe("route edges", () => {
  let provider: TestServer;
  let app: ReturnType<typeof gateway>;

  before(async () => {
    provider = await startServer(answer("notes", "notes", [{ title: "t", locator: "https://a/" }]));
    app = gateway([{ name: "notes", endpoint: provider.url }], { settings: { maxInflight: 1 } });
  });
  after(() => provider.close());

  it("HEAD /v1/search answers 405 with Allow and contacts no provider", async () => {
    const before = provider.requests.length;
    const res = await app.request("/v1/search?q=deadline", { method: "HEAD" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, POST");
    assert.equal(provider.requests.length, before);
  });

  for (
    const [method, path, allow] of <Array<[string, string, string]>> [
      ["DELETE", "/v1/search", "GET, POST"],
      ["PUT", "/v1/providers", "GET, HEAD"],
      ["POST", "/v1/status", "GET, HEAD"],
      ["POST", "/schemas/envelope.json", "GET, HEAD"],
      ["POST", "/.well-known/jwks.json", "GET, HEAD"],
    ]
  ) {
    it(`${method} ${path} answers a 405 envelope with Allow: ${allow}`, async () => {
      const res = await app.request(path, { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get("allow"), allow);
      assert.equal(assertEnvelope(await res.json()).code, "method_not_allowed");
    });
  }

  it("/v1/search/ with a trailing slash is not a route", async () => {
    const res = await app.request("/v1/search/?q=deadline");
    assert.equal(res.status, 404);
    assert.equal(assertEnvelope(await res.json()).code, "not_found");
  });

  it("a refused request takes no search slot, even at the in-flight limit of one", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await app.request("/v1/search?q=deadline&limit=0");
      assert.equal(assertEnvelope(await res.json()).code, "limit_out_of_range");
    }
    const res = await app.request("/v1/search?q=deadline");
    assert.equal(assertEnvelope(await res.json()).code, "ok");
  });

  it("a body that stops arriving is answered 408 request_timeout with Connection: close, and frees its place", async () => {
    const slow = gateway([{ name: "notes", endpoint: provider.url }], {
      settings: { bodyTimeoutMs: 200, maxInflight: 1, maxBodiesInRead: 1 },
    });
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"query":'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const res = await slow.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 408);
    assert.equal(res.headers.get("connection"), "close");
    const envelope = assertEnvelope(await res.json());
    assert.equal(envelope.code, "request_timeout");
    assert.equal(envelope.retryable, true);
    assert.equal(cancelled, true, "the late body is cancelled");
    const next = await slow.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "deadline" }),
    });
    assert.equal(assertEnvelope(await next.json()).code, "ok");
  });

  it("a body over 1 MiB without Content-Length is 413 body_too_large with Connection: close", async () => {
    const chunk = new Uint8Array(65_536).fill(32);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await app.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal(res.headers.get("connection"), "close");
    assert.equal(assertEnvelope(await res.json()).code, "body_too_large");
    assert.ok(sent < 40, "reading stopped at the cap");
  });
});

describe("every JSON answer forbids content sniffing", () => {
  let provider: TestServer;
  before(async () => {
    provider = await startServer(answer("notes", "notes", [{ title: "t", locator: "https://a/" }]));
  });
  after(() => provider.close());

  it("envelopes (200, 4xx, 503), the JSON Schemas, the JWKS, OpenAPI and a stream say nosniff", async () => {
    const keys = await keyPair("EdDSA", "nosniff-1");
    const app = gateway([{ name: "notes", endpoint: provider.url }], {
      env: {
        TRACEFETCH_SIGNING_JWK: JSON.stringify(keys.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      },
    });
    for (
      const [path, init] of <Array<[string, RequestInit]>> [
        ["/v1/search?q=deadline", {}],
        ["/v1/search?q=deadline&limit=0", {}],
        ["/no-such-route", {}],
        ["/v1/status", {}],
        ["/schemas/envelope.json", {}],
        ["/.well-known/jwks.json", {}],
        ["/openapi.json", {}],
        ["/v1/search?q=deadline", { headers: { accept: "application/x-ndjson" } }],
      ]
    ) {
      const res = await app.request(path, init);
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${path} ${res.status}`);
    }
  });
});
