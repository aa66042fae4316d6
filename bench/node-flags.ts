/**
 * The Node flags `npm start` runs the gateway with, read from a checkout's package.json (the
 * `start` script's flags before `--import`), so a bench child runs each tree's gateway exactly as
 * that tree's `npm start` would.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function startFlags(tree = fileURLToPath(new URL("..", import.meta.url))): string[] {
  const pkg = JSON.parse(readFileSync(`${tree}/package.json`, "utf8")) as {
    scripts?: { start?: string };
  };
  const words = (pkg.scripts?.start ?? "").split(/\s+/);
  const node = words.indexOf("node");
  const flags: string[] = [];
  for (const word of words.slice(node + 1)) {
    if (word === "--import" || !word.startsWith("--")) break;
    flags.push(word);
  }
  return flags;
}
