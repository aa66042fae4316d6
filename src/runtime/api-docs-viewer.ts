/**
 * The API reference viewer that /docs runs: the standalone browser bundle of @scalar/api-reference,
 * the script @scalar/hono-api-reference's page would otherwise load from a CDN. Node and Deno read
 * it from the installed package; the worker build bundles the same file (scripts/build-worker.ts).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ApiDocsViewer } from "../config/gateway-config.ts";

/** The package whose bundle the Scalar page loads by default, from a CDN. */
export const VIEWER_PACKAGE = "@scalar/api-reference";

/** The bundle, relative to the folder of the package's main module (`dist/index.js`). */
const STANDALONE = join("browser", "standalone.js");

/** The bundle's path where Node's resolution finds the package; null when it is not installed. */
export function viewerFile(packageName = VIEWER_PACKAGE): string | null {
  try {
    return join(dirname(createRequire(import.meta.url).resolve(packageName)), STANDALONE);
  } catch {
    return null;
  }
}

/** Reads the bundle on the first /docs, once; null when the package or the file is missing. */
export function installedViewer(file = viewerFile()): ApiDocsViewer {
  let read: Promise<string | null> | null = null;
  return () => (read ??= file === null
    ? Promise.resolve(null)
    : readFile(file, "utf8").catch(() => null));
}
