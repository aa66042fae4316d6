/**
 * Headless Chromium for the browser tests, driven by playwright-core: the build inside the npm
 * package @sparticuz/chromium, unpacked once into node_modules/.cache by scripts/test-chromium.ts,
 * or the Chromium TRACEFETCH_CHROMIUM names; never a browser playwright downloads, and never the
 * system's unless the variable names it. Without a browser the tests fail with the reason (and
 * `npm test` names the suite that cannot run), never skip.
 */
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { testChromium } from "../../scripts/test-chromium.ts";

/**
 * Headless, unsandboxed (containers and CI runners often forbid its namespaces), and quiet: no
 * update, sync or first-run traffic. The packaged build adds its own (no GPU, no zygote).
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** A cold start of Chromium on a busy two-core machine takes a few seconds; more is a hang. */
const LAUNCH_TIMEOUT_MS = 30_000;

/** Waits in a browser test: generous for a loaded machine, yet a stuck page fails, not hangs. */
export const BROWSER_WAIT_MS = 15_000;

/** Where screenshots go: gitignored, beside node:test's own output. */
export const SCREENSHOT_DIR = new URL("../../test-results/", import.meta.url);

/**
 * Launches the tests' Chromium headless (scripts/test-chromium.ts chooses it from `env`); throws
 * saying why there is none and what to set.
 */
export async function launchChromium(
  env: Record<string, string | undefined> = process.env,
): Promise<Browser> {
  const choice = await testChromium(env);
  if (!choice.ok) throw new Error(`the browser tests have no Chromium: ${choice.reason}`);
  const { executablePath, flags } = choice.chromium;
  const { chromium } = await import("playwright-core");
  return await chromium.launch({
    executablePath,
    headless: true,
    args: [...new Set([...CHROMIUM_FLAGS, ...flags])],
    env: { ...withoutUndefined(process.env), ...choice.chromium.env },
    timeout: LAUNCH_TIMEOUT_MS,
  });
}

function withoutUndefined(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/** Runs `use` on a new page of `browser`, closing the page whatever happens. */
export async function withPage<T>(browser: Browser, use: (page: Page) => Promise<T>): Promise<T> {
  const page = await browser.newPage();
  try {
    return await use(page);
  } finally {
    await page.close();
  }
}

/** A full-page screenshot in test-results/, named for the case it shows. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({
    path: fileURLToPath(new URL(`${name}.png`, SCREENSHOT_DIR)),
    fullPage: true,
    timeout: BROWSER_WAIT_MS,
  });
}

/**
 * What went wrong in a page as it ran: console errors (Chromium reports a blocked inline script or
 * style there), uncaught exceptions, and Content-Security-Policy violations, which a listener
 * installed before any of the page's own scripts records.
 */
export async function watchProblems(page: Page): Promise<() => Promise<string[]>> {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as unknown as { __cspViolations: string[] }).__cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (event) => {
      seen.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
    });
  });
  return async () => {
    const violations = await page.evaluate(() =>
      (globalThis as unknown as { __cspViolations?: string[] }).__cspViolations ?? []
    );
    return [...problems, ...violations.map((v) => `csp: ${v}`)];
  };
}
