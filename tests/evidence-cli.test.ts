/**
 * `tracefetch fetch` and `tracefetch verify` against a gateway listening on 127.0.0.1 that fetches
 * a loopback article: --json answers ok, --out writes the bundle, verify checks it offline (the
 * gateway closed first), and an altered file or a quote not in the page gets its verdict.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { listen } from "../src/runtime/node-listen.ts";
import { runJson, tempConfig } from "./support/cli.ts";
import { evidenceGateway, startSite } from "./support/evidence-gateway.ts";
import { sha256Hex } from "../src/io/digests.ts";

describe("tracefetch fetch and verify", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  let gw: Awaited<ReturnType<typeof evidenceGateway>>;
  let served: Awaited<ReturnType<typeof listen>>;
  let temp: Awaited<ReturnType<typeof tempConfig>>;
  let gateway: string;
  before(async () => {
    site = await startSite();
    gw = await evidenceGateway();
    served = await listen(gw.app.fetch);
    gateway = `http://127.0.0.1:${served.port}`;
    temp = await tempConfig();
  });
  after(async () => {
    await served.close();
    await gw.close();
    await site.close();
    await temp.remove();
  });

  it("fetch URL --json --gateway URL answers ok with the evidence and a receipt", async () => {
    const { envelope } = await runJson(["fetch", `${site.base}/article`, "--gateway", gateway], {
      config: temp.dir,
    });
    assert.deepEqual([envelope.ok, envelope.command, envelope.code], [true, "fetch", "ok"]);
    assert.match(envelope.result.evidence.markdown, /Neap tides come at the quarter moons/);
    assert.equal(typeof envelope.result.receipt, "string");
  });

  it("--out DIR writes the bundle, and verify DIR checks it offline", async () => {
    const dir = join(temp.dir, "bundle");
    const { envelope } = await runJson(
      ["fetch", `${site.base}/article`, "--gateway", gateway, "--out", dir],
      { config: temp.dir },
    );
    assert.equal(envelope.code, "ok");
    assert.deepEqual((await readdir(dir)).sort(), [
      "anchors.jsonl",
      "jwks.json",
      "links.json",
      "normalized.md",
      "raw.html",
      "receipt.json",
    ]);
    const normalized = await readFile(join(dir, "normalized.md"), "utf8");
    assert.equal(await sha256Hex(normalized), envelope.result.evidence.markdown_sha256);
    const raw = new Uint8Array(await readFile(join(dir, "raw.html")));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
    assert.equal(
      Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
      envelope.result.evidence.source_sha256,
    );

    // Offline: verify takes no gateway, and the saved connection points nowhere.
    const verified = await runJson(
      ["verify", dir, "--quote", "spring tides come WITH a new moon"],
      {
        config: temp.dir,
      },
    );
    assert.deepEqual([verified.envelope.ok, verified.envelope.result.verdict], [true, "verified"]);
    assert.equal(verified.envelope.result.quote.anchor.heading, "Spring tides");

    assert.match(verified.stdout, /"verdict":"verified"/);
    const missing = await runJson(["verify", dir, "--quote", "a tsunami warning"], {
      config: temp.dir,
    });
    assert.equal(missing.envelope.result.verdict, "quote_not_found");

    await writeFile(join(dir, "raw.html"), "<p>another page</p>");
    const rawAltered = await runJson(["verify", dir], { config: temp.dir });
    assert.equal(rawAltered.envelope.result.verdict, "content_mismatch");

    await writeFile(join(dir, "normalized.md"), `${normalized}\nAn added line.`);
    const altered = await runJson(["verify", dir], { config: temp.dir });
    assert.equal(altered.envelope.result.verdict, "content_mismatch");
  });

  it("verify DIR with another key set is signature_invalid", async () => {
    const dir = join(temp.dir, "bundle-2");
    await runJson(["fetch", `${site.base}/article`, "--gateway", gateway, "--out", dir], {
      config: temp.dir,
    });
    const other = await evidenceGateway();
    try {
      const jwks = await (await other.app.request("/.well-known/jwks.json")).text();
      await writeFile(join(temp.dir, "other-jwks.json"), jwks);
      const run = await runJson(
        ["verify", dir, "--jwks", join(temp.dir, "other-jwks.json")],
        { config: temp.dir },
      );
      assert.equal(run.envelope.result.verdict, "signature_invalid");
    } finally {
      await other.close();
    }
  });
});
