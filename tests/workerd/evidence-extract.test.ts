/**
 * The extractor and the body's decoding in workerd: a fetch there reads legacy encodings through
 * the runtime's TextDecoder (the Content-Type's charset, a `<meta>`, the windows-1252 fallback) and
 * makes the same main text as on Node and Deno, GFM tables and fenced code included.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Miniflare } from "miniflare";
import { bundleEntry } from "./miniflare.ts";
import { listen, type Listener } from "../support/fetch-fixture.ts";

/** A worker that runs one fetch per request, as the route does, and answers its outcome. */
const ENTRY = `
import { createRobotsCache, fetchEvidence, fetchPolicyOf, fetchUserAgent } from "./src/evidence/mod.ts";
import { workerFetchParts } from "./src/runtime/worker-evidence.ts";

export default {
  async fetch(request, env) {
    const { url, format } = await request.json();
    const outcome = await fetchEvidence(
      { url, format: format ?? "markdown", max_chars: 20000, timeout_ms: 5000 },
      fetchPolicyOf({ allow_private_cidrs: ["127.0.0.1/32"], deny_domains: [], allow_domains: [] }),
      {
        ...workerFetchParts({ dohUrl: env.DOH_URL }),
        now: () => Date.now(),
        signal: request.signal,
        robots: createRobotsCache(),
        userAgent: fetchUserAgent("0.0.0-test"),
      },
    );
    return Response.json(outcome);
  },
};
`;

const page = (head: string, body: number[]) => {
  const enc = new TextEncoder();
  return new Uint8Array([
    ...enc.encode(`<!doctype html><html><head>${head}<title>Charset</title></head><body><p>`),
    ...body,
    ...enc.encode(
      " is the paragraph of this page, long enough to be its main text.</p></body></html>",
    ),
  ]);
};

const DOCS = readFileSync(new URL("../fixtures/pages/en-docs.html", import.meta.url));

describe("the extractor in workerd", () => {
  let mf: Miniflare;
  let site: Listener;

  before(async () => {
    const serve = (type: string, body: Uint8Array) =>
    (_req: unknown, res: {
      writeHead: (s: number, h: Record<string, string>) => void;
      end: (b: Uint8Array) => void;
    }) => {
      res.writeHead(200, { "content-type": type });
      res.end(body);
    };
    site = await listen("127.0.0.1", 0, {
      // "Привет" in KOI8-R, named by the header.
      "/koi8r": serve("text/html; charset=koi8-r", page("", [0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4])),
      // "日本語" in Shift_JIS, named by a <meta>.
      "/sjis": serve(
        "text/html",
        page('<meta charset="shift_jis">', [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]),
      ),
      // "“café”" in windows-1252, named nowhere.
      "/cp1252": serve("text/html", page("", [0x93, 0x63, 0x61, 0x66, 0xe9, 0x94])),
      "/docs": serve("text/html; charset=utf-8", new Uint8Array(DOCS)),
    });
    mf = new Miniflare({
      modules: true,
      script: await bundleEntry(ENTRY, "evidence-extract-worker.ts"),
      compatibilityDate: "2026-04-26",
      compatibilityFlags: ["enable_request_signal"],
      // Every URL here is an address: no name is ever resolved.
      bindings: { DOH_URL: "http://127.0.0.1:9/dns-query" },
    });
    await mf.ready;
  });

  after(async () => {
    await mf?.dispose();
    await site?.close();
  });

  const markdown = async (path: string) => {
    const res = await mf.dispatchFetch("http://worker.test/", {
      method: "POST",
      body: JSON.stringify({ url: `http://127.0.0.1:${site.port}${path}` }),
    });
    const outcome = await res.json() as { outcome: string; evidence?: { markdown: string } };
    assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
    return outcome.evidence?.markdown ?? "";
  };

  it("reads KOI8-R named by the Content-Type", async () => {
    assert.match(await markdown("/koi8r"), /^Привет is the paragraph/);
  });

  it("reads Shift_JIS named by a <meta>", async () => {
    assert.match(await markdown("/sjis"), /^日本語 is the paragraph/);
  });

  it("reads undeclared bytes that are not UTF-8 as windows-1252", async () => {
    assert.match(await markdown("/cp1252"), /^“café” is the paragraph/);
  });

  it("keeps a documentation page's text, GFM table and code, and drops its chrome", async () => {
    const text = await markdown("/docs");
    assert.ok(text.includes("| Field | Default | Meaning |\n| --- | --- | --- |"));
    assert.ok(text.includes("```ts\nconst client = new Client({"));
    for (const chrome of ["Tidewater 4.0 is out", "Edit this page", "Installation"]) {
      assert.ok(!text.includes(chrome), chrome);
    }
  });
});
