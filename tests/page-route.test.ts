/**
 * `GET /` answers a browser with the page and everyone else with the index envelope; the page and
 * its files are served with their Content-Security-Policy and nosniff, even where every other route
 * needs a token; the page holds no inline script, style or handler; a Chromium that cannot be had
 * fails the browser tests saying why. (The page itself runs in tests/browser-page.test.ts.)
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { PAGE_CSP, prefersHtml } from "../src/http/page-route.ts";
import { PAGE_HTML } from "../src/http/page/page-assets.ts";
import { PAGE_SCRIPT } from "../src/http/page/page-script.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";
import { launchChromium } from "./support/browser.ts";

/** What Chromium sends when a person opens a URL. */
const BROWSER_ACCEPT =
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

describe("which GET / gets the page", () => {
  for (
    const [accept, html] of [
      [BROWSER_ACCEPT, true],
      ["text/html", true],
      ["text/html;q=0.9, application/json;q=0.5", true],
      ["TEXT/HTML; charset=utf-8", true],
      [undefined, false],
      ["*/*", false],
      ["application/json", false],
      ["text/*", false],
      ["text/html, application/json", false],
      ["application/json, text/html;q=0.9", false],
      ["text/html;q=0, */*", false],
      ["application/*, text/html;q=0.5", false],
    ] as const
  ) {
    it(`Accept: ${accept ?? "(none)"} → ${html ? "the page" : "the envelope"}`, () => {
      assert.equal(prefersHtml(accept), html);
    });
  }
});

describe("the page's answers", () => {
  let provider: TestServer;
  let app: ReturnType<typeof gateway>;
  before(async () => {
    provider = await startServer(answer("notes", "notes", [{ title: "t", locator: "https://a/" }]));
    app = gateway([{ name: "notes", endpoint: provider.url }]);
  });
  after(() => provider.close());

  const pageHeaders = (res: Response) => {
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-security-policy"), PAGE_CSP);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  };

  it("a browser gets the HTML page, and each file it names is served with its type", async () => {
    const res = await app.request("/", { headers: { accept: BROWSER_ACCEPT } });
    pageHeaders(res);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(res.headers.get("vary"), "accept");
    const html = await res.text();
    assert.equal(html, PAGE_HTML);
    const named = [...html.matchAll(/(?:src|href)="(\/page\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.deepEqual(named.sort(), ["/page/app.css", "/page/app.js", "/page/icon.svg"]);
    const types: Record<string, RegExp> = {
      "/page/app.css": /^text\/css; charset=utf-8$/,
      "/page/app.js": /^text\/javascript; charset=utf-8$/,
      "/page/icon.svg": /^image\/svg\+xml$/,
    };
    for (const path of named) {
      const file = await app.request(path);
      pageHeaders(file);
      assert.match(file.headers.get("content-type") ?? "", types[path]!, path);
    }
    const head = await app.request("/", { method: "HEAD", headers: { accept: BROWSER_ACCEPT } });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });

  it("curl, fetch and agents still get the index envelope, which varies on Accept too", async () => {
    for (const accept of [undefined, "*/*", "application/json", "text/html, application/json"]) {
      const res = await app.request("/", accept ? { headers: { accept } } : {});
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal(res.headers.get("vary"), "accept");
      assert.equal(assertEnvelope(await res.json()).command, "index");
    }
  });

  it("a file the page does not have is a 404 envelope; another method is a 405 with Allow", async () => {
    for (const name of ["nothing.js", "__proto__", "constructor"]) {
      const res = await app.request(`/page/${name}`);
      assert.equal(res.status, 404, name);
      assert.equal(assertEnvelope(await res.json()).code, "not_found");
    }
    const res = await app.request("/page/app.js", { method: "POST" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
  });

  it("with TRACEFETCH_REQUIRE_AUTH the page and its files need no token; the index still does", async () => {
    const locked = gateway([{ name: "notes", endpoint: provider.url }], {
      env: {
        TRACEFETCH_AUTH_SECRET: "s".repeat(32),
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
        TRACEFETCH_REQUIRE_AUTH: "1",
      },
    });
    pageHeaders(await locked.request("/", { headers: { accept: BROWSER_ACCEPT } }));
    pageHeaders(await locked.request("/page/app.js"));
    const index = await locked.request("/", { headers: { accept: "application/json" } });
    assert.equal(index.status, 401);
    assert.equal(assertEnvelope(await index.json()).code, "unauthorized");
  });
});

describe("the page's text", () => {
  it("holds no inline script, style attribute or event handler (the CSP would block them)", () => {
    for (const tag of PAGE_HTML.matchAll(/<script\b[^>]*>/g)) assert.match(tag[0], /\bsrc="/);
    assert.doesNotMatch(PAGE_HTML, /<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it("the script parses, and never writes markup from data", () => {
    assert.doesNotThrow(() => new Function(PAGE_SCRIPT));
    assert.doesNotMatch(PAGE_SCRIPT, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    assert.doesNotMatch(PAGE_SCRIPT, /localStorage|sessionStorage|document\.cookie/);
  });
});

describe("the docs", () => {
  it("docs/security.md states the page's Content-Security-Policy as served", () => {
    const security = readFileSync(new URL("../docs/security.md", import.meta.url), "utf8");
    assert.ok(security.includes(`Content-Security-Policy: ${PAGE_CSP}`));
  });
});

describe("without Chromium", () => {
  it("the browser tests fail naming the variable that points nowhere, never skip", async () => {
    await assert.rejects(
      launchChromium({ TRACEFETCH_CHROMIUM: "/nonexistent/chromium" }),
      /no Chromium: TRACEFETCH_CHROMIUM names \/nonexistent\/chromium, which does not exist/,
    );
  });
});
