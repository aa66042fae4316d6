/**
 * POST and GET /v1/fetch and POST /v1/verify against a loopback site the manifest opens: the page
 * comes back as markdown without its navigation, footer or banner, one anchor per heading, its
 * hash and a receipt jose accepts against /.well-known/jwks.json; verify answers each verdict; the
 * cache, the caller limits and a gateway without a fetch block or a key answer as documented.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { assertEnvelope } from "./support/gateway.ts";
import { evidenceGateway, ISSUER, startSite } from "./support/evidence-gateway.ts";
import { sha256Hex } from "../src/io/digests.ts";
import { RECEIPT_TYP } from "../src/protocol/mod.ts";

type App = Awaited<ReturnType<typeof evidenceGateway>>["app"];

async function call(app: App, path: string, body?: unknown) {
  const res = await app.request(
    path,
    body === undefined ? {} : {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    },
  );
  return { status: res.status, body: assertEnvelope(await res.json()) };
}

describe("fetch and verify over a loopback site", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  let gw: Awaited<ReturnType<typeof evidenceGateway>>;
  before(async () => {
    site = await startSite();
    gw = await evidenceGateway();
  });
  after(async () => {
    await gw.close();
    await site.close();
  });

  it("the article comes back as markdown without nav, footer or banner, one anchor per heading, its hash, and a receipt jose accepts against the JWKS", async () => {
    const { status, body } = await call(gw.app, "/v1/fetch", { url: `${site.base}/article` });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual([body.ok, body.command, body.code], [true, "fetch", "ok"]);
    const { evidence, receipt, cached, warnings } = body.result;
    assert.equal(cached, false);
    assert.deepEqual(warnings, []);
    assert.match(evidence.markdown, /Spring tides come with a new moon/);
    for (const chrome of ["About us", "Copyright 2026", "Accept all cookies"]) {
      assert.ok(!evidence.markdown.includes(chrome), `${chrome} is in the markdown`);
    }
    assert.equal(evidence.title, "Tide tables");
    // The article's headings below its title, one anchor each (the title's h1 is the page's title).
    const headings = evidence.anchors.map((a: { heading: string }) => a.heading);
    assert.deepEqual(headings.filter((h: string) => h !== "Tide tables"), [
      "Spring tides",
      "Neap tides",
    ]);
    assert.equal(evidence.markdown_sha256, await sha256Hex(evidence.markdown));
    assert.equal(evidence.final_url, `${site.base}/article`);

    const jwks = await (await gw.app.request("/.well-known/jwks.json")).json();
    assert.equal(decodeProtectedHeader(receipt).typ, RECEIPT_TYP);
    const { payload } = await jwtVerify(receipt, createLocalJWKSet(jwks), {
      issuer: ISSUER,
      typ: RECEIPT_TYP,
    });
    assert.equal(payload.markdown_sha256, evidence.markdown_sha256);
    assert.equal(payload.source_sha256, evidence.source_sha256);
    assert.equal(payload.final_url, evidence.final_url);
    assert.equal(payload.format, "markdown");
  });

  it("verify: verified for a quote from the page, quote_not_found, content_mismatch, signature_invalid for one claim changed", async () => {
    const fetched = await call(gw.app, "/v1/fetch", {
      url: `${site.base}/article`,
      max_age_seconds: 0,
    });
    const { evidence, receipt } = fetched.body.result;
    const verify = async (ask: Record<string, unknown>) => {
      const { status, body } = await call(gw.app, "/v1/verify", ask);
      assert.equal(status, 200);
      assert.deepEqual([body.ok, body.command], [true, "verify"]);
      return body.result;
    };
    const good = await verify({
      receipt,
      markdown: evidence.markdown,
      quote: "SPRING tides come with a new moon",
    });
    assert.equal(good.verdict, "verified");
    assert.equal(good.quote.anchor.heading, "Spring tides");
    const line = evidence.markdown.split("\n")[good.quote.line_start - 1];
    assert.match(line, /Spring tides come/);
    assert.equal(
      (await verify({ receipt, markdown: evidence.markdown, quote: "low water at noon" })).verdict,
      "quote_not_found",
    );
    assert.equal(
      (await verify({ receipt, markdown: evidence.markdown.replace("moon", "mo0n") })).verdict,
      "content_mismatch",
    );
    const [h, p, s] = receipt.split(".");
    const claims = JSON.parse(new TextDecoder().decode(base64url(p)));
    claims.status_code = 203;
    const forged = `${h}.${toBase64url(JSON.stringify(claims))}.${s}`;
    assert.equal(
      (await verify({ receipt: forged, markdown: evidence.markdown })).verdict,
      "signature_invalid",
    );
    assert.equal((await verify({ markdown: evidence.markdown })).verdict, "unsigned");
  });

  it("GET /v1/fetch is the same request; a second fetch is cached and says its age", async () => {
    const url = `${site.base}/notes.md`;
    const first = await call(gw.app, `/v1/fetch?url=${encodeURIComponent(url)}&format=text`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.match(first.body.result.evidence.text, /^Notes\n\nLow water at noon\.\n?$/);
    const asked = site.requests.filter((r) => r.path === "/notes.md").length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await call(gw.app, "/v1/fetch", { url, format: "text" });
    assert.equal(again.body.result.cached, true);
    assert.ok(again.body.result.age_ms >= 0);
    assert.equal(again.body.result.receipt, first.body.result.receipt);
    assert.equal(site.requests.filter((r) => r.path === "/notes.md").length, asked);
    const fresh = await call(gw.app, "/v1/fetch", { url, format: "text", max_age_seconds: 0 });
    assert.equal(fresh.body.result.cached, false);
  });

  it("include_raw adds the body as received, whose SHA-256 is source_sha256", async () => {
    const { body } = await call(gw.app, "/v1/fetch", {
      url: `${site.base}/article`,
      include_raw: true,
    });
    const raw = Uint8Array.from(atob(body.result.raw_base64), (c) => c.charCodeAt(0));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    assert.equal(hex, body.result.evidence.source_sha256);
  });

  it("a request is read as strictly as a search's, before anything is fetched", async () => {
    const before = site.requests.length;
    const cases: Array<[unknown, string]> = [
      [{ url: `${site.base}/article`, depth: 2 }, "unknown_field"],
      [{ url: null }, "null_field"],
      ['{"url":"a","url":"b"}', "invalid_field"],
      [{ url: `${site.base}/article`, max_chars: 200_001 }, "invalid_field"],
      [{ url: `${site.base}/article`, timeout_ms: 60_001 }, "timeout_out_of_range"],
    ];
    for (const [body, code] of cases) {
      const answer = await call(gw.app, "/v1/fetch", body);
      assert.equal(answer.body.code, code, JSON.stringify(body));
    }
    const get = await call(gw.app, "/v1/fetch?url=a&url=b");
    assert.equal(get.body.code, "invalid_field");
    const head = await gw.app.request(`/v1/fetch?url=${site.base}/article`, { method: "HEAD" });
    assert.equal(head.status, 405);
    assert.equal(site.requests.length, before);
  });

  it("a URL the policy refuses is url_forbidden, naming the url field", async () => {
    const { status, body } = await call(gw.app, "/v1/fetch", { url: "http://127.0.0.2/x" });
    assert.equal(status, 403);
    assert.deepEqual([body.code, body.error.field], ["url_forbidden", "url"]);
  });
});

describe("fetch as the manifest and the keys allow", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  before(async () => {
    site = await startSite();
  });
  after(() => site.close());

  it("without a fetch block: fetch_disabled, and nothing is fetched", async () => {
    const gw = await evidenceGateway({ fetch: null });
    try {
      const { status, body } = await call(gw.app, "/v1/fetch", { url: `${site.base}/article` });
      assert.deepEqual([status, body.code, body.action], [403, "fetch_disabled", "check_access"]);
      assert.equal(site.requests.length, 0);
    } finally {
      await gw.close();
    }
  });

  it("without a signing key: receipt null and a warning; verify answers unsigned", async () => {
    const gw = await evidenceGateway({ sign: false });
    try {
      const { body } = await call(gw.app, "/v1/fetch", { url: `${site.base}/article` });
      assert.equal(body.result.receipt, null);
      assert.match(body.result.warnings[0], /TRACEFETCH_SIGNING_JWK/);
      const verdict = await call(gw.app, "/v1/verify", {
        receipt: "a.b.c",
        markdown: body.result.evidence.markdown,
      });
      assert.equal(verdict.body.result.verdict, "unsigned");
    } finally {
      await gw.close();
    }
  });

  it("caller_limits counts a fetch as a search", async () => {
    const gw = await evidenceGateway({ extra: { caller_limits: { searches_per_minute: 1 } } });
    try {
      const first = await call(gw.app, "/v1/fetch", { url: `${site.base}/article` });
      assert.equal(first.body.code, "ok");
      const second = await call(gw.app, "/v1/search", { query: "tides" });
      assert.deepEqual([second.status, second.body.code], [429, "rate_limited"]);
      const third = await call(gw.app, "/v1/fetch", { url: `${site.base}/article` });
      assert.deepEqual([third.status, third.body.code], [429, "rate_limited"]);
    } finally {
      await gw.close();
    }
  });
});

function base64url(text: string): Uint8Array {
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)), (c) => c.charCodeAt(0));
}

function toBase64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}
