/**
 * The page at `GET /` in a real browser (headless Chromium, tests/support/browser.ts) against a
 * gateway listening on 127.0.0.1: a search over the embedded default draws its three providers and
 * the merged list; a hanging, a failing and a disabled provider show their outcome and code in
 * their colour, its latency bar on a log scale; a provider's `<script>` is shown as text and never
 * runs; a repository path links to its evidence; every control has a label and Tab reaches each in
 * order; a pasted token goes in Authorization only; the page runs under its
 * CSP with nothing blocked. Node only.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { PAGE_CSP } from "../src/http/page-route.ts";
import { latencyShare, OUTCOME_COLOURS, type OutcomeGroup } from "../src/http/page/page-style.ts";
import { answer, hold, raw, startServer, type TestServer } from "./support/servers.ts";
import { gateway } from "./support/gateway.ts";
import {
  BROWSER_WAIT_MS,
  launchChromium,
  screenshot,
  watchProblems,
  withPage,
} from "./support/browser.ts";
import { openPage, readHits, readRows, rgb, searchOnPage, statusStarting } from "./support/page.ts";
import { readSettings } from "../src/config/settings.ts";

/** A browser case starts a page and a search or two; a minute is ample on a loaded machine. */
const CASE = { timeout: 60_000 };
const wait = { timeout: BROWSER_WAIT_MS };

describe("the page in a real browser", {
  skip: "Deno" in globalThis ? "Node only: playwright-core drives Chromium from Node" : false,
  timeout: 8 * CASE.timeout,
}, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  describe("over the embedded default", () => {
    let served: Launched;
    let url: string;
    before(async () => {
      served = await launch(readSettings({ PORT: "0", HOST: "127.0.0.1" }), listen, nodePorts());
      url = `${served.url}/`;
    });
    after(async () => {
      await served?.close();
    });

    it(
      "a search draws three provider rows, each a success, and a merged list whose hit expands to its evidence",
      CASE,
      () =>
        withPage(browser, async (page) => {
          const problems = await watchProblems(page);
          assert.match(
            await searchOnPage(page, url, "deadline"),
            /^Done: ok, \d+ results, \d+ ms$/,
          );
          const rows = await readRows(page);
          assert.deepEqual(rows.map((r) => r.name).sort(), [
            "engineering",
            "reference",
            "workspace",
          ]);
          for (const row of rows) {
            assert.equal(row.group, "success", row.text);
            assert.match(row.text, /^success: code ok, \d+ results, \d+ ms$/);
            assert.equal(row.swatch, rgb(OUTCOME_COLOURS.success));
            assert.ok(row.barWidth >= 1, `${row.name}'s bar is drawn`);
            assert.equal(row.deadlineLines, 1, `${row.name}'s row has the deadline's line`);
          }
          assert.equal(
            await page.textContent("#deadline-note", wait),
            "The line is the deadline: 10000 ms.",
          );
          const hits = await readHits(page);
          assert.ok(hits.length > 0, "the merged list is drawn");
          for (const hit of hits) {
            assert.match(hit.rank, /^best rank \d+$/);
            assert.ok(hit.badges.length >= 1, hit.title);
          }
          assert.ok(hits.some((h) => h.badges.length >= 2), "some page is found by two providers");

          await page.click("#merged > li:first-child button", wait);
          const evidence = await page.waitForSelector(
            "#merged > li:first-child pre.evidence",
            wait,
          );
          assert.ok(
            ((await evidence.textContent()) ?? "").trim().length > 0,
            "evidence text shown",
          );
          await screenshot(page, "page-embedded-default");
          assert.deepEqual(await problems(), []);
        }),
    );

    it(
      "latency bars on a log scale: a fast answer is a visible share of its track, the deadline's line near the end",
      CASE,
      () =>
        withPage(browser, async (page) => {
          await searchOnPage(page, url, "deadline");
          for (const row of await readRows(page)) {
            const latency = Number(/(\d+) ms$/.exec(row.text)?.[1]);
            const share = row.barWidth / row.trackWidth;
            const want = latencyShare(latency, 10_000);
            assert.ok(
              Math.abs(share - want) < 0.02,
              `${row.name}: ${latency} ms drawn at ${share}`,
            );
            if (latency >= 10) assert.ok(share > 0.2, `${row.name}: ${latency} ms is ${share}`);
            assert.ok(Math.abs(row.deadlineAt - latencyShare(10_000, 10_000)) < 0.02, row.name);
          }
        }),
    );

    it(
      "a workspace hit's repository path is a link to its evidence, shown in place",
      CASE,
      () =>
        withPage(browser, async (page) => {
          await searchOnPage(page, url, "deadline");
          const hits = await readHits(page);
          const index = hits.findIndex((h) => h.locator.startsWith("docs/"));
          assert.ok(index >= 0, "a workspace hit");
          const hit = hits[index]!;
          assert.equal(hit.tag, "a");
          assert.equal(hit.href, `#hit-${index}-evidence`);
          await page.click(`#hit-${index}`, wait);
          const evidence = await page.waitForSelector(`#hit-${index}-evidence pre.evidence`, wait);
          assert.ok(((await evidence.textContent()) ?? "").trim().length > 0);
          assert.equal(new URL(page.url()).hash, "", "the page stays where it is");
        }),
    );

    it(
      "the Search button comes after the token field, and no legend swatch wraps away from its word",
      CASE,
      () =>
        withPage(browser, async (page) => {
          await openPage(page, url);
          const order = await page.evaluate(() => {
            const token = document.getElementById("token") as HTMLElement;
            const search = document.getElementById("search") as HTMLButtonElement;
            return {
              after: Boolean(
                token.compareDocumentPosition(search) & Node.DOCUMENT_POSITION_FOLLOWING,
              ),
              form: search.form?.id ?? null,
            };
          });
          assert.deepEqual(order, { after: true, form: "search-form" });
          for (let width = 280; width <= 720; width += 20) {
            await page.setViewportSize({ width, height: 800 });
            const split = await page.$$eval(
              ".key",
              (keys) => keys.filter((k) => k.getClientRects().length > 1).map((k) => k.textContent),
            );
            assert.deepEqual(split, [], `at ${width} px`);
          }
        }),
    );

    it(
      "every control has a label and an accessible name, and Tab reaches each in order",
      CASE,
      () =>
        withPage(browser, async (page) => {
          await searchOnPage(page, url, "fusion");
          const controls = await page.$$eval("input, select, textarea, button, a[href]", (all) =>
            all.map((el, i) => {
              el.setAttribute("data-probe", String(i));
              const labels = (el as HTMLInputElement).labels;
              return { tag: el.tagName.toLowerCase(), labels: labels ? labels.length : null };
            }));
          assert.ok(controls.length >= 8, `only ${controls.length} controls`);
          for (const [i, c] of controls.entries()) {
            if (c.tag === "input" || c.tag === "select") {
              assert.ok(c.labels! >= 1, `${c.tag} #${i}`);
            }
          }

          // The accessibility tree Chromium gives assistive technology: every control has a name.
          const cdp = await page.context().newCDPSession(page);
          const { nodes } = await cdp.send("Accessibility.getFullAXTree");
          const roles = [
            "textbox",
            "searchbox",
            "spinbutton",
            "combobox",
            "checkbox",
            "button",
            "link",
          ];
          const named = nodes.filter((n) =>
            !n.ignored && roles.includes(String(n.role?.value))
          );
          assert.equal(named.length, controls.length, "each control is in the accessibility tree");
          for (const node of named) {
            assert.ok(
              String(node.name?.value ?? "").trim() !== "",
              `a ${node.role?.value} unnamed`,
            );
          }

          // Clicking the heading puts Tab's starting point above the first control.
          await page.click("h1", wait);
          const reached: number[] = [];
          for (let i = 0; i < controls.length; i++) {
            await page.keyboard.press("Tab");
            reached.push(
              await page.evaluate(() =>
                Number(document.activeElement?.getAttribute("data-probe") ?? -1)
              ),
            );
          }
          assert.deepEqual(reached, controls.map((_, i) => i));
        }),
    );

    it(
      "sends a pasted token as Authorization only: never in a URL, a cookie or storage",
      CASE,
      () =>
        withPage(browser, async (page) => {
          const TOKEN = "pasted.token.value";
          const sent: Array<{ url: string; authorization: string | undefined }> = [];
          page.on(
            "request",
            (r) => sent.push({ url: r.url(), authorization: r.headers().authorization }),
          );
          await openPage(page, url);
          await page.fill("#token", TOKEN, wait);
          await page.fill("#query", "deadline", wait);
          await page.click("#search", wait);
          // This gateway has no keys, so it refuses any token: the page shows the envelope's code.
          assert.match(await statusStarting(page, "Refused"), /token_invalid \(action login\)/);
          const search = sent.find((r) => r.url.endsWith("/v1/search"));
          assert.equal(search?.authorization, `Bearer ${TOKEN}`);
          assert.ok(sent.every((r) => !r.url.includes(TOKEN)), "no URL carries the token");
          const kept = await page.evaluate(() => ({
            url: location.href,
            cookie: document.cookie,
            stored: localStorage.length + sessionStorage.length,
          }));
          assert.deepEqual(kept, { url, cookie: "", stored: 0 });
        }),
    );

    it(
      "is served with its CSP and nosniff, has no inline script or style, and nothing is blocked",
      CASE,
      () =>
        withPage(browser, async (page) => {
          const problems = await watchProblems(page);
          const res = await openPage(page, url);
          const headers = res?.headers() ?? {};
          assert.equal(headers["content-security-policy"], PAGE_CSP);
          assert.match(PAGE_CSP, /default-src 'self'/);
          assert.match(PAGE_CSP, /frame-ancestors 'none'/);
          assert.doesNotMatch(PAGE_CSP, /unsafe-inline|unsafe-eval/);
          assert.equal(headers["x-content-type-options"], "nosniff");
          assert.match(headers["content-type"] ?? "", /^text\/html/);
          const inline = await page.evaluate(() => ({
            scripts: Array.from(document.scripts).filter((s) => s.src === "").length,
            styles: document.querySelectorAll("style, [style]").length,
            handlers: Array.from(document.querySelectorAll("*")).filter((el) =>
              Array.from(el.attributes).some((a) => a.name.startsWith("on"))
            ).length,
          }));
          assert.deepEqual(inline, { scripts: 0, styles: 0, handlers: 0 });
          assert.deepEqual(await problems(), []);
        }),
    );
  });

  describe("over a hanging, a failing, a disabled and a hostile provider", () => {
    const hostileTitle = '<script>window.__pwned = "title"</script>Deadline <b>notes</b>';
    const hostileSnippet = '<img src="/nowhere" onerror="window.__pwned = \'snippet\'">budget';
    const providers: TestServer[] = [];
    let served: Listening;
    let url: string;

    before(async () => {
      const steady = await startServer(answer("steady", "notes", [
        {
          title: hostileTitle,
          locator: "javascript:window.__pwned='link'",
          snippet: hostileSnippet,
        },
        { title: "A plain page", locator: "https://notes.example/plain", snippet: "plain" },
      ]));
      const hanging = await startServer(hold);
      const failing = await startServer(raw(500, JSON.stringify({ error: "boom" })));
      providers.push(steady, hanging, failing);
      const app = gateway([
        { name: "steady", scope: "notes", endpoint: steady.url },
        { name: "hanging", scope: "notes", endpoint: hanging.url, timeout_seconds: 1 },
        { name: "failing", scope: "notes", endpoint: failing.url },
        { name: "resting", scope: "notes", endpoint: steady.url, timeout_seconds: 0 },
      ]);
      served = await listen(app.fetch, "127.0.0.1", 0);
      url = `http://127.0.0.1:${served.port}/`;
    });
    after(async () => {
      await served?.close();
      await Promise.all(providers.map((p) => p.close()));
    });

    it(
      "shows the hanging provider as a timeout (provider_timeout), the failing one as a failure with its code, the disabled one skipped, each in its colour",
      CASE,
      () =>
        withPage(browser, async (page) => {
          const problems = await watchProblems(page);
          assert.match(await searchOnPage(page, url, "deadline"), /^Done: partial/);
          const rows = new Map((await readRows(page)).map((r) => [r.name, r]));
          const expected: Array<[string, OutcomeGroup, RegExp]> = [
            ["steady", "success", /^success: code ok, 2 results, \d+ ms$/],
            ["hanging", "timeout", /^timeout: code timeout \(provider_timeout\), \d+ ms$/],
            ["failing", "failure", /^failure: search_failed, code search_failed, \d+ ms$/],
            ["resting", "skipped", /^skipped: disabled$/],
          ];
          assert.deepEqual([...rows.keys()].sort(), expected.map(([name]) => name).sort());
          for (const [name, group, text] of expected) {
            const row = rows.get(name)!;
            assert.equal(row.group, group, name);
            assert.match(row.text, text);
            assert.equal(row.swatch, rgb(OUTCOME_COLOURS[group]), `${name}'s colour`);
          }
          assert.equal(rows.get("hanging")!.bar, rgb(OUTCOME_COLOURS.timeout));
          assert.equal(rows.get("failing")!.bar, rgb(OUTCOME_COLOURS.failure));
          assert.match(rows.get("failing")!.message, /HTTP 500/);
          await screenshot(page, "page-hanging-failing");
          assert.deepEqual(await problems(), []);
        }),
    );

    it(
      "shows a provider's <script> and markup as text, runs none of it, and links only http(s) locators",
      CASE,
      () =>
        withPage(browser, async (page) => {
          await searchOnPage(page, url, "deadline", ["steady"]);
          const shown = (await readHits(page)).map(({ title, tag, href, snippet }) => ({
            title,
            tag,
            href,
            snippet,
          }));
          assert.deepEqual(shown, [
            { title: hostileTitle, tag: "span", href: null, snippet: hostileSnippet },
            {
              title: "A plain page",
              tag: "a",
              href: "https://notes.example/plain",
              snippet: "plain",
            },
          ]);
          const injected = await page.evaluate(() => ({
            pwned: (globalThis as unknown as { __pwned?: string }).__pwned ?? null,
            elements: document.querySelectorAll("#merged script, #merged img, #merged b").length,
            javascriptLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
          }));
          assert.deepEqual(injected, { pwned: null, elements: 0, javascriptLinks: 0 });
          await screenshot(page, "page-hostile-provider");
        }),
    );
  });
});
