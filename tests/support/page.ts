/**
 * Driving the page at `GET /` (src/http/page/) in a browser: run a search the way a person would
 * and read back what it drew.
 */
import type { Page } from "playwright-core";
import { BROWSER_WAIT_MS } from "./browser.ts";

const wait = { timeout: BROWSER_WAIT_MS };

/** `#1a7f37` as Chromium reports a computed colour. */
export function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

/** Opens the page once its providers are listed. */
export async function openPage(page: Page, url: string) {
  const res = await page.goto(url, { waitUntil: "load", ...wait });
  await page.waitForSelector("#providers input[type=checkbox]", wait);
  return res;
}

/** Waits for the status line to start with `prefix`: `Done` once a search ended. */
export async function statusStarting(page: Page, prefix: string): Promise<string> {
  await page.waitForFunction(
    (p) => document.getElementById("status")?.textContent?.startsWith(p) ?? false,
    prefix,
    wait,
  );
  return await page.textContent("#status", wait) ?? "";
}

/** Opens the page, searches for `query` (ticking `providers` when given) and waits for done. */
export async function searchOnPage(
  page: Page,
  url: string,
  query: string,
  providers: string[] = [],
): Promise<string> {
  await openPage(page, url);
  for (const name of providers) await page.check(`#providers input[value="${name}"]`, wait);
  await page.fill("#query", query, wait);
  await page.click("#search", wait);
  return await statusStarting(page, "Done");
}

/** Each provider row as drawn: name, outcome group (its class), texts, colours and bar width. */
export function readRows(page: Page) {
  return page.$$eval("#rows .row", (items) =>
    items.map((item) => ({
      name: item.querySelector(".name")?.textContent ?? "",
      group: /outcome-(\w+)/.exec(item.className)?.[1] ?? "",
      text: item.querySelector(".outcome-text")?.textContent ?? "",
      message: item.querySelector(".message")?.textContent ?? "",
      swatch: getComputedStyle(item.querySelector(".swatch") as Element).backgroundColor,
      bar: getComputedStyle(item.querySelector(".bar") as Element).backgroundColor,
      barWidth: (item.querySelector(".bar") as HTMLElement).getBoundingClientRect().width,
      trackWidth: (item.querySelector(".track") as HTMLElement).getBoundingClientRect().width,
      /** Where the deadline's line is drawn, as a share of the track. */
      deadlineAt: (() => {
        const track = (item.querySelector(".track") as HTMLElement).getBoundingClientRect();
        const line = (item.querySelector(".deadline") as HTMLElement).getBoundingClientRect();
        return (line.left + line.width / 2 - track.left) / track.width;
      })(),
      deadlineLines: item.querySelectorAll(".deadline").length,
    })));
}

/** The merged list as drawn: each hit's title (and whether it is a link), snippet and badges. */
export function readHits(page: Page) {
  return page.$$eval("#merged > li", (items) =>
    items.map((li) => ({
      title: li.querySelector(".title")?.textContent ?? "",
      locator: li.querySelector(".locator")?.textContent ?? "",
      tag: li.querySelector(".title")?.tagName.toLowerCase() ?? "",
      href: li.querySelector(".title")?.getAttribute("href") ?? null,
      snippet: li.querySelector(".snippet")?.textContent ?? "",
      rank: li.querySelector(".best-rank")?.textContent ?? "",
      badges: Array.from(li.querySelectorAll(".badge"), (b) => b.textContent ?? ""),
    })));
}
