/**
 * /v1/fetch and /v1/verify in workerd, through the bundled worker as deployed (the fetch route and
 * the extractor as extra modules): a loopback article the manifest opens comes back as markdown
 * with a receipt jose accepts against the worker's /.well-known/jwks.json, and verify answers
 * verified for a quote from it. An address in the URL is fetched as written, so no DNS is asked.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { createLocalJWKSet, jwtVerify } from "jose";
import { startWorker } from "./miniflare.ts";
import { ISSUER, signingJwk, startSite } from "../support/evidence-gateway.ts";
import { RECEIPT_TYP } from "../../src/protocol/mod.ts";
import { sha256Hex } from "../../src/io/digests.ts";

describe("fetch and verify in workerd", () => {
  let mf: Miniflare;
  let site: Awaited<ReturnType<typeof startSite>>;
  before(async () => {
    site = await startSite();
    mf = await startWorker({
      TRACEFETCH_MANIFEST: JSON.stringify({
        schema_version: "tracefetch.providers.v1",
        providers: [],
        fetch: { allow_private_cidrs: ["127.0.0.1/32"] },
      }),
      TRACEFETCH_SIGNING_JWK: await signingJwk(),
      TRACEFETCH_GATEWAY_ISSUER: ISSUER,
    });
  });
  after(async () => {
    await mf?.dispose();
    await site?.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await mf.dispatchFetch(`http://gateway.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    // deno-lint-ignore no-explicit-any
    return { status: res.status, body: await res.json() as any };
  };

  it("an article comes back with its hash and a receipt the JWKS verifies; verify answers verified", async () => {
    const { status, body } = await post("/v1/fetch", { url: `${site.base}/article` });
    assert.equal(status, 200, JSON.stringify(body));
    const { evidence, receipt } = body.result;
    assert.match(evidence.markdown, /Spring tides come with a new moon/);
    assert.ok(!evidence.markdown.includes("Copyright 2026"));
    assert.equal(evidence.markdown_sha256, await sha256Hex(evidence.markdown));
    const jwks = await (await mf.dispatchFetch("http://gateway.test/.well-known/jwks.json")).json();
    // deno-lint-ignore no-explicit-any
    const keys = createLocalJWKSet(jwks as any);
    const { payload } = await jwtVerify(receipt, keys, { issuer: ISSUER, typ: RECEIPT_TYP });
    assert.equal(payload.markdown_sha256, evidence.markdown_sha256);

    const verified = await post("/v1/verify", {
      receipt,
      markdown: evidence.markdown,
      quote: "neap tides come at the quarter moons",
    });
    assert.deepEqual([verified.status, verified.body.result.verdict], [200, "verified"]);
    const mismatch = await post("/v1/verify", { receipt, markdown: `${evidence.markdown} ` });
    assert.equal(mismatch.body.result.verdict, "content_mismatch");
  });
});
