/**
 * The OpenAPI document and the API reference in workerd: /openapi.json comes from the worker's own
 * extra module; /docs is off unless TRACEFETCH_API_DOCS is on, and then its viewer script comes
 * from the worker too. The document, the page and the viewer never load with the main module, and
 * a build made without TRACEFETCH_API_DOCS=1 carries no viewer at all.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { bundleWorker, viewerForBuild } from "../../scripts/build-worker.ts";
import { viewerFile as installedViewerFile } from "../../src/runtime/api-docs-viewer.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

const MANIFEST = JSON.stringify(manifestOf([{ name: "workspace", scope: "local" }]));
const VIEWER = "globalThis.Scalar = { createApiReference() {} };\n";

describe("the OpenAPI document and /docs in workerd", () => {
  let dir: string;
  let viewerFile: string;
  let off: Miniflare;
  let on: Miniflare;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-viewer-"));
    viewerFile = join(dir, "viewer.js");
    await writeFile(viewerFile, VIEWER);
    off = await startWorker({ TRACEFETCH_MANIFEST: MANIFEST }, { viewerFile });
    on = await startWorker({ TRACEFETCH_MANIFEST: MANIFEST, TRACEFETCH_API_DOCS: "1" }, {
      viewerFile,
    });
  });
  after(async () => {
    await off?.dispose();
    await on?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (mf: Miniflare, path: string) => mf.dispatchFetch(`http://gateway.test${path}`);

  it("GET /openapi.json answers schemas/openapi.json byte for byte", async () => {
    const res = await get(off, "/openapi.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const file = await readFile(new URL("../../schemas/openapi.json", import.meta.url), "utf8");
    assert.equal(await res.text(), file);
  });

  it("/docs and its script are off by default: a 404 envelope naming the variable", async () => {
    for (const path of ["/docs", "/docs/scalar.js"]) {
      const res = await get(off, path);
      assert.equal(res.status, 404, path);
      const body = assertEnvelope(await res.json());
      assert.match(body.error.message, /TRACEFETCH_API_DOCS=1/);
    }
  });

  it("with TRACEFETCH_API_DOCS=1, /docs is the page and its script the bundled viewer", async () => {
    const page = await get(on, "/docs");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-security-policy") ?? "", /^default-src 'self'/);
    const html = await page.text();
    assert.match(html, /<script src="\/docs\/scalar\.js"><\/script>/);
    assert.doesNotMatch(html, /https?:\/\//);
    const script = await get(on, "/docs/scalar.js");
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.equal(await script.text(), VIEWER);
  });

  it("the document, the page and the viewer are extra modules, never loaded at start", async () => {
    const modules = await bundleWorker({ withCorpus: false, name: "openapi-test", viewerFile });
    const atStart = modules.filter((m) => m.loaded === "start").flatMap((m) => m.inputs);
    const viewer = modules.find((m) => m.code.includes(VIEWER.trim()));
    assert.equal(viewer?.loaded, "on_demand", "the viewer is an extra module");
    for (const file of ["schemas/openapi.json", "src/http/api-docs-page.ts"]) {
      assert.ok(!atStart.includes(file), `${file} is in the main module`);
    }
    assert.ok(
      !atStart.some((file) => file.includes("node_modules/@scalar/")),
      "Scalar's page code is in the main module",
    );
  });

  it("a build without TRACEFETCH_API_DOCS=1 carries no viewer, and its /docs says how to turn it on", async () => {
    assert.equal(viewerForBuild({}), null);
    assert.equal(viewerForBuild({ TRACEFETCH_API_DOCS: "0" }), null);
    assert.equal(viewerForBuild({ TRACEFETCH_API_DOCS: "1" }), installedViewerFile());
    const modules = await bundleWorker({ withCorpus: false, name: "openapi-bare" });
    const installed = installedViewerFile();
    if (installed !== null) {
      // The viewer's text is bundled as it is: its opening would be in some module.
      const opening = (await readFile(installed, "utf8")).slice(0, 200);
      assert.ok(!modules.some((m) => m.code.includes(JSON.stringify(opening).slice(1, -1))));
    }
    const bare = await startWorker({ TRACEFETCH_MANIFEST: MANIFEST, TRACEFETCH_API_DOCS: "1" });
    try {
      for (const path of ["/docs", "/docs/scalar.js"]) {
        const res = await get(bare, path);
        assert.equal(res.status, 404, path);
        const body = assertEnvelope(await res.json());
        assert.match(body.error.message, /TRACEFETCH_API_DOCS=1 npm run build:worker/);
      }
    } finally {
      await bare.dispose();
    }
  });
});
