/**
 * The page a browser gets at `GET /` (docs/deploy.md, "The page"): plain HTML, a style sheet and a
 * module script that stream a search and draw each provider as it answers. A request that does not
 * prefer HTML (curl's any-type Accept, an agent's `application/json`) gets the index envelope.
 *
 * The page and its files carry no data, so they are served before the caller is resolved: with
 * TRACEFETCH_REQUIRE_AUTH a person still gets the page, pastes a token, and every call the page
 * makes carries it. Their answers and text are a module of its own (`page/page-answers.ts`),
 * loaded on the first page asked for: agents never load it, and on Workers it is an extra module.
 */
import type { Hono } from "hono";
import type { GatewayEnv } from "./caller-middleware.ts";
import { lazy } from "../core/lazy-module.ts";

const loadPageAnswers = lazy(() => import("./page/page-answers.ts"));

/**
 * Content-Security-Policy of the page and its files: scripts, styles and fetches from this origin
 * only (no inline script or style), never framed, no `<base>` to redirect relative URLs, and a form
 * submits only here.
 */
export const PAGE_CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

/** The highest quality an Accept header gives the ranges `matches` picks; 0 when it has none. */
function quality(accept: string, matches: (range: string) => boolean): number {
  let best = 0;
  for (const part of accept.split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (!matches(range)) continue;
    const q = params.find((p) => p.startsWith("q="));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(value)) best = Math.max(best, value);
  }
  return best;
}

/**
 * Whether a request to `GET /` should get the page: its Accept names `text/html` itself, at a
 * higher quality than JSON. An any-type range alone (curl, fetch) never does, and a tie goes to the
 * envelope, the answer agents rely on.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = quality(accept, (r) => r === "text/html");
  const json = quality(accept, (r) => r === "application/json" || r === "application/*");
  return html > 0 && html > json;
}

/** Registers `GET /` for browsers and `GET /page/{name}`; call before the caller middleware. */
export function registerPage(app: Hono<GatewayEnv>): void {
  app.get("/", async (c, next) => {
    if (prefersHtml(c.req.header("accept"))) {
      return (await loadPageAnswers()).pageAnswer(c, PAGE_CSP);
    }
    await next();
    c.res.headers.append("vary", "accept");
  });

  app.get("/page/:file", async (c) => (await loadPageAnswers()).pageFileAnswer(c, PAGE_CSP));
}
