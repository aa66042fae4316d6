/**
 * One answer path (docs/architecture.md, "One answer path"): a built-in called in process whose
 * answer breaks the wire schema is that attempt's provider_protocol_error, exactly as the same
 * answer over HTTP would be, never a 500 for the whole search. Runs on Node and on Deno; the same
 * cases run in workerd in tests/workerd/broken-builtin.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { assertEnvelope, settingsFor } from "./support/gateway.ts";
import {
  BROKEN_ANSWERS,
  BROKEN_MANIFEST,
  brokenBuiltins,
  GOOD_PAGE,
} from "./support/broken-builtin.ts";

const app = createGateway(settingsFor(BROKEN_MANIFEST, {}, { describeProviders: false }), {
  builtins: brokenBuiltins(),
});

describe("a built-in whose answer breaks the wire schema", () => {
  for (const query of Object.keys(BROKEN_ANSWERS)) {
    it(`answer "${query}": that attempt is a provider_protocol_error, the search is partial`, async () => {
      const res = await app.request(`/v1/search?q=${query}`);
      const body = assertEnvelope(await res.json());
      assert.equal(res.status, 200);
      assert.equal(body.code, "partial");
      const [workspace, exa] = body.result.candidates;
      assert.equal(workspace.provider, "workspace");
      assert.equal(workspace.outcome, "provider_protocol_error");
      assert.equal(workspace.code, "schema_violation");
      assert.equal(workspace.retryable, false);
      assert.equal(workspace.candidate_count, 0);
      assert.equal(exa.outcome, "success");
      assert.deepEqual(body.result.merged.map((m: { locator: string }) => m.locator), [
        GOOD_PAGE.locator,
      ]);
    });
  }

  it("an expand answer that breaks its schema is the provider's failure, not an internal error", async () => {
    const res = await app.request("/v1/expand", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "workspace", locator: "docs/x.md" }),
    });
    const body = assertEnvelope(await res.json());
    assert.equal(body.code, "provider_failed");
    assert.equal(res.status, 502);
    assert.match(body.error.message, /title/);
  });
});
