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
