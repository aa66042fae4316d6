/**
 * One answer path in workerd: the gateway bundled as a Worker with a built-in whose answers break
 * the wire schema (tests/support/broken-builtin.ts); each broken answer is that attempt's
 * provider_protocol_error and the search is partial, never a 500.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import { bundleEntry } from "./miniflare.ts";
import { assertEnvelope } from "../support/gateway.ts";
import { BROKEN_ANSWERS, GOOD_PAGE } from "../support/broken-builtin.ts";

/** The gateway over the broken built-ins, composed as a Worker root composes it. */
const ENTRY = `
import { createGateway } from "./src/http/create-gateway.ts";
import { readSettings } from "./src/config/settings.ts";
import { BROKEN_MANIFEST, brokenBuiltins } from "./tests/support/broken-builtin.ts";

const settings = readSettings({ TRACEFETCH_DESCRIBE_PROVIDERS: "0" })
  .withManifest({ value: BROKEN_MANIFEST });
const app = createGateway(settings, { builtins: brokenBuiltins() });
export default { fetch: (request, env, context) => app.fetch(request, env, context) };
`;

describe("workerd: a built-in whose answer breaks the wire schema", () => {
  let mf: Miniflare;

  before(async () => {
    mf = new Miniflare({
      modules: true,
      script: await bundleEntry(ENTRY, "broken-worker.ts"),
      compatibilityDate: "2026-04-26",
    });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
  });

  for (const query of Object.keys(BROKEN_ANSWERS)) {
    it(`answer "${query}": a provider_protocol_error attempt beside a success, never a 500`, async () => {
      const res = await mf.dispatchFetch(`http://gateway.test/v1/search?q=${query}`);
      const body = assertEnvelope(await res.json());
      assert.equal(res.status, 200);
      assert.equal(body.code, "partial");
      const [workspace, exa] = body.result.candidates;
      assert.equal(workspace.outcome, "provider_protocol_error");
      assert.equal(workspace.code, "schema_violation");
      assert.equal(exa.outcome, "success");
      assert.equal(body.result.merged[0].locator, GOOD_PAGE.locator);
    });
  }
});
