/**
 * A provider written against the kit's Worker-safe entry (src/kit/mod.ts, what
 * `tracefetch-edge/kit` is built from), bundled as wrangler bundles a Worker and run in workerd.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import { bundleEntry } from "./miniflare.ts";

/** A Worker whose adapter fails, without a retry that could help, when its binding says so. */
const ENTRY = `
import { ProviderError, workerEntry } from "./src/kit/mod.ts";

export default workerEntry({
  name: "notes",
  scope: "docs",
  adapter: (text) => ({
    name: "notes",
    scope: "docs",
    async search({ query, limit }) {
      if (text("BROKEN") === "1") {
        throw new ProviderError("adapter_unavailable", "the index is gone", { retryable: false });
      }
      return { candidates: [{ title: query, locator: "https://notes.example/1" }].slice(0, limit) };
    },
  }),
});
`;

const SEARCH = JSON.stringify({
  schema_version: "tracefetch.provider-request.v1",
  action: "search",
  query: "deadlines",
  limit: 3,
});

describe("a provider on the kit in workerd", () => {
  const workers: Miniflare[] = [];
  let code = "";

  before(async () => {
    code = await bundleEntry(ENTRY, "kit-worker.ts");
  });
  after(async () => {
    for (const mf of workers) await mf.dispose();
  });

  async function start(bindings: Record<string, string>): Promise<Miniflare> {
    const mf = new Miniflare({
      modules: true,
      script: code,
      compatibilityDate: "2026-04-26",
      compatibilityFlags: ["enable_request_signal"],
      bindings,
    });
    workers.push(mf);
    await mf.ready;
    return mf;
  }

  const post = (mf: Miniflare) =>
    mf.dispatchFetch("http://provider.test/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: SEARCH,
    });

  it("answers a search with a provider-response.v1 naming itself", async () => {
    const res = await post(await start({}));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      schema_version: "tracefetch.provider-response.v1",
      provider: "notes",
      scope: "docs",
      candidates: [{ title: "deadlines", locator: "https://notes.example/1" }],
      warnings: [],
    });
  });

  it("a non-retryable ProviderError travels as its code with retryable false", async () => {
    const res = await post(await start({ BROKEN: "1" }));
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      schema_version: "tracefetch.provider-error.v1",
      code: "adapter_unavailable",
      message: "the index is gone",
      retryable: false,
    });
  });
});
