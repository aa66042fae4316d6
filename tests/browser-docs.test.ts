/**
 * `/docs` in a real browser (headless Chromium, tests/support/browser.ts): the API reference lists
 * every path of the OpenAPI document, and the page fetches nothing but the gateway's own files.
 * Node only.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { BROWSER_WAIT_MS, launchChromium, screenshot, withPage } from "./support/browser.ts";
import { readSettings } from "../src/config/settings.ts";

const openapi = JSON.parse(
  readFileSync(new URL("../schemas/openapi.json", import.meta.url), "utf8"),
) as { paths: Record<string, unknown> };

describe("the API reference at /docs in a real browser", {
  skip: "Deno" in globalThis ? "Node only: playwright-core drives Chromium from Node" : false,
  timeout: 120_000,
}, () => {
  let browser: Browser;
  let served: Launched;
  before(async () => {
    browser = await launchChromium();
    served = await launch(readSettings({ PORT: "0", HOST: "127.0.0.1" }), listen, nodePorts());
  });
  after(async () => {
    await served?.close();
    await browser?.close();
  });

  it("lists every path of the OpenAPI document, loading only the gateway's own files", () =>
    withPage(browser, async (page) => {
      const origin = new URL(served.url).origin;
      const elsewhere: string[] = [];
      page.on("request", (request) => {
        const url = request.url();
        if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) {
          elsewhere.push(url);
        }
      });
      await page.goto(`${origin}/docs`, { timeout: BROWSER_WAIT_MS });
      await page.waitForFunction(
        () => document.body.innerText.includes("/v1/search"),
        undefined,
        { timeout: BROWSER_WAIT_MS },
      );
      await screenshot(page, "docs");
      const text = await page.evaluate(() => document.body.innerText);
      const missing = Object.keys(openapi.paths).filter((path) => !text.includes(path));
      assert.deepEqual(missing, [], `paths the page does not show: ${missing.join(", ")}`);
      assert.deepEqual(elsewhere, []);
    }));
});
