/**
 * The page's files, in one module that `page-route.ts` loads by a dynamic import on the first page
 * asked for: on Workers an extra module with its own reported size, never loaded by an agent.
 */
import { PAGE_HTML } from "./page-html.ts";
import { PAGE_SCRIPT } from "./page-script.ts";
import { PAGE_STYLE } from "./page-style.ts";

export { PAGE_HTML };

/** Three bars of different lengths: providers answering. */
const PAGE_ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">' +
  '<rect x="1" y="2" width="14" height="3" fill="#1a7f37"/>' +
  '<rect x="1" y="7" width="9" height="3" fill="#9a5b00"/>' +
  '<rect x="1" y="12" width="5" height="3" fill="#0b5cad"/></svg>';

/** The files under `/page/`, by name: what `/page/{name}` serves and with which type. */
export const PAGE_FILES: Record<string, { body: string; contentType: string }> = {
  "app.js": { body: PAGE_SCRIPT, contentType: "text/javascript; charset=utf-8" },
  "app.css": { body: PAGE_STYLE, contentType: "text/css; charset=utf-8" },
  // Named by the page, so a browser never asks for /favicon.ico and logs its 404.
  "icon.svg": { body: PAGE_ICON, contentType: "image/svg+xml" },
};
