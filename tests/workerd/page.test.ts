/**
 * The page at `GET /` in workerd: a browser gets the HTML with its CSP, the worker serves its script,
 * style sheet and icon, and a JSON Accept still gets the index envelope. The page's text is an extra
 * module: left out, the page fails while the envelope answers as before.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { PAGE_CSP } from "../../src/http/page-route.ts";
import { PAGE_FILES, PAGE_HTML } from "../../src/http/page/page-assets.ts";
import { startWorker } from "./miniflare.ts";

const BROWSER = {
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
};
const MANIFEST = JSON.stringify(manifestOf([{ name: "workspace", scope: "local" }]));

describe("the page in workerd", () => {
  let mf: Miniflare;
  before(async () => {
    mf = await startWorker({ TRACEFETCH_MANIFEST: MANIFEST });
  });
  after(async () => {
    await mf?.dispose();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    mf.dispatchFetch(`http://gateway.test${path}`, { headers });

  it("GET / with a browser's Accept answers the page with its CSP and nosniff", async () => {
    const res = await get("/", BROWSER);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(res.headers.get("content-security-policy"), PAGE_CSP);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(await res.text(), PAGE_HTML);
  });

  it("the worker serves the page's script, style sheet and icon, each with its CSP", async () => {
    for (const [name, file] of Object.entries(PAGE_FILES)) {
      const res = await get(`/page/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get("content-type"), file.contentType, name);
      assert.equal(res.headers.get("content-security-policy"), PAGE_CSP, name);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", name);
      assert.equal(await res.text(), file.body, name);
    }
  });

  it("a JSON Accept, or none, still gets the index envelope", async () => {
    for (const headers of [{ accept: "application/json" }, {}, { accept: "*/*" }]) {
      const res = await get("/", headers);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const body = assertEnvelope(await res.json());
      assert.deepEqual([body.command, body.code], ["index", "ok"]);
    }
  });
});

describe("the page's module left out of the worker", () => {
  let mf: Miniflare;
  before(async () => {
    mf = await startWorker({ TRACEFETCH_MANIFEST: MANIFEST }, {
      withoutExtraModules: true,
      quiet: true,
    });
  });
  after(async () => {
    await mf?.dispose();
  });

  it("the page is an internal_error, and the envelope at GET / answers as before", async () => {
    const page = await mf.dispatchFetch("http://gateway.test/", { headers: BROWSER });
    assert.equal(page.status, 500);
    assert.equal(assertEnvelope(await page.json()).code, "internal_error");
    const index = await mf.dispatchFetch("http://gateway.test/", {
      headers: { accept: "application/json" },
    });
    assert.equal(assertEnvelope(await index.json()).code, "ok");
  });
});
