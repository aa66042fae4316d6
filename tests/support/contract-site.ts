/**
 * The loopback site the contract's `full` gateway fetches pages from (its manifest's `fetch` block
 * opens 127.0.0.1/32): a page for each answer of a fetch, from an article and a markdown file to a
 * page robots.txt disallows, a redirect loop, an image, a 500 and a connection that closes.
 */
import { listen, type Route } from "./fetch-fixture.ts";

/** Redirects to itself: past MAX_FETCH_REDIRECTS. */
const LOOP: Route = (_req, res) => {
  res.writeHead(302, { location: "/loop" });
  res.end();
};

const page = (type: string, body: string | Uint8Array, status = 200): Route => (_req, res) => {
  res.writeHead(status, { "content-type": type });
  res.end(body);
};

/** The pages the full gateway fetches, one for each answer of a fetch; any other path is a 404. */
const SITE: Record<string, Route> = {
  "/robots.txt": page("text/plain", "User-agent: *\nDisallow: /private\n"),
  "/article": page(
    "text/html; charset=utf-8",
    "<!doctype html><html><head><title>Tides</title></head><body><nav>Home</nav><main>" +
      "<article><h1>Tides</h1><p>The moon pulls the sea toward it, twice a day.</p>" +
      "<h2>Spring tides</h2><p>Spring tides come with a new moon and a full moon.</p>" +
      '<p>See <a href="/neap">neap tides</a>.</p></article></main></body></html>',
  ),
  "/notes.md": page("text/markdown; charset=utf-8", "# Notes\n\nLow water at noon.\n"),
  "/private": page("text/plain", "not for gateways"),
  "/loop": LOOP,
  "/png": page("image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47])),
  "/fails": page("text/plain", "down", 500),
  "/closes": (req) => req.socket.destroy(),
};

let siteBase: string | null = null;

/** Starts the site on 127.0.0.1; what it returns stops it. */
export async function startSite(): Promise<() => Promise<void>> {
  const site = await listen("127.0.0.1", 0, SITE);
  siteBase = `http://127.0.0.1:${site.port}`;
  return () => site.close().then(() => void (siteBase = null));
}

/** The URL of a page of the loopback site, once startGateways has started it. */
export function sitePage(path: string): string {
  if (siteBase === null) throw new Error("the contract's site is not started");
  return `${siteBase}${path}`;
}
