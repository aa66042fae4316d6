import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answer, startServer } from "./support/servers.ts";
import { gateway, search } from "./support/gateway.ts";

describe("smoke", () => {
  it("fuses two real providers on 127.0.0.1 into one envelope", async () => {
    const a = await startServer(answer("a", "a", [{ title: "A", locator: "https://x.org/1" }]));
    const b = await startServer(
      answer("b", "b", [{ title: "B", locator: "https://www.x.org/1/" }]),
    );
    try {
      const app = gateway([{ name: "a", endpoint: a.url }, { name: "b", endpoint: b.url }]);
      const { res, body } = await search(app);
      assert.equal(res.status, 200);
      assert.equal(body.code, "ok");
      assert.deepEqual(body.result.merged[0].found_by, ["a", "b"]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("what a provider receives", () => {
  it("one POST with the request id and a W3C traceparent: one trace per search, one span per attempt", async () => {
    const a = await startServer(answer("a", "a", []));
    const b = await startServer(answer("b", "b", []));
    try {
      const app = gateway([{ name: "a", endpoint: a.url }, { name: "b", endpoint: b.url }]);
      const { body } = await search(app, {}, { headers: { "x-request-id": "req-123" } });
      assert.equal(body.request_id, "req-123");
      const [ra, rb] = [a.requests[0]!, b.requests[0]!];
      for (const r of [ra, rb]) {
        assert.equal(r.method, "POST");
        assert.equal(r.headers["x-request-id"], "req-123");
        assert.match(String(r.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        assert.deepEqual(JSON.parse(r.body), {
          schema_version: "tracefetch.provider-request.v1",
          action: "search",
          query: "deadline",
          limit: 8,
        });
      }
      const [, traceA, spanA] = String(ra.headers.traceparent).split("-");
      const [, traceB, spanB] = String(rb.headers.traceparent).split("-");
      assert.equal(traceA, traceB);
      assert.notEqual(spanA, spanB);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
