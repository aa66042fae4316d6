/**
 * The repository's words stand on their own: no text cites a document the repository does not
 * hold (the normative pages are docs/protocol.md and docs/envelope.md), and every folder under
 * src/ opens with the boundary it keeps.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What `grep -r` is told to leave out: dependencies, history, build and test output. */
const SKIPPED = new Set(["node_modules", ".git", "dist", "test-results", ".wrangler"]);

/**
 * The word that cited an outside document ("see the ... 3.1"), spelled in two halves so this file
 * does not match itself. As with `grep -rniE '\bWORD\b'`: any case, whole word only.
 */
const OUTSIDE_DOCUMENT = new RegExp(`\\b${"des"}${"ign"}\\b`, "i");

/**
 * The judged collections' documents, queries and judgments: third-party text kept exactly as
 * published (bench/eval/SOURCE.md), where the word is the ordinary English one.
 */
const COLLECTION_DATA = /^bench[\\/]eval[\\/][^\\/]+[\\/][^\\/]+\.(jsonl|tsv)$/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : files(path);
    return entry.isFile() && !COLLECTION_DATA.test(relative(ROOT, path)) ? [path] : [];
  });
}

/** `file:line: text` for every line that names the outside document; binary files are skipped. */
function citations(found: Array<{ file: string; text: string }>): string[] {
  return found.flatMap(({ file, text }) =>
    text.includes("\u0000")
      ? []
      : text.split("\n").flatMap((line, i) =>
        OUTSIDE_DOCUMENT.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []
      )
  );
}

/** The opening doc comment of a file, or null when the file does not open with one. */
function openingComment(text: string): string | null {
  if (!text.startsWith("/**")) return null;
  const end = text.indexOf("*/");
  return end === -1 ? null : text.slice(0, end + 2);
}

/**
 * Where each folder directly under src/ states its boundary: its mod.ts, except the CLI, whose
 * entry (main.ts) is what runs and nothing imports it as a module.
 */
function boundaryFile(folder: string): string {
  return folder === "cli" ? "main.ts" : "mod.ts";
}

describe("self-contained words", () => {
  it("no file outside node_modules, .git, dist, test-results and .wrangler cites an outside document", () => {
    const all = files(ROOT).map((path) => ({
      file: relative(ROOT, path).split("\\").join("/"),
      text: readFileSync(path, "utf8"),
    }));
    assert.ok(all.some((f) => f.file === "docs/protocol.md"), "the walk reaches docs/");
    assert.ok(all.some((f) => f.file === "src/protocol/limits.ts"), "the walk reaches src/");
    const found = citations(all);
    assert.deepEqual(
      found,
      [],
      `cite docs/protocol.md, docs/envelope.md, another page under docs/, an RFC, or nothing:\n${
        found.join("\n")
      }`,
    );
  });

  it("the scan flags the word in any case, as a whole word, and nothing else", () => {
    const word = ["des", "ign"].join("");
    const flagged = [
      ` * Boundary: whether one runs is the manifest's decision (${word} 3.1)`,
      `// adjusted where the ${word.toUpperCase()} makes it depend on the search`,
      `${word[0]?.toUpperCase()}${word.slice(1)} 5 says so.`,
    ];
    const quiet = [`re${word}ed`, `${word}er`, `${word}s`, "docs/protocol.md, section 3"];
    const text = [...flagged, ...quiet].join("\n");
    assert.deepEqual(
      citations([{ file: "x.md", text }]),
      flagged.map((line, i) => `x.md:${i + 1}: ${line.trim()}`),
    );
    assert.deepEqual(citations([{ file: "x.bin", text: `\u0000${flagged[0]}` }]), []);
  });
});

describe("boundaries", () => {
  const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

  it("every folder under src/ has a mod.ts (the CLI: its main.ts)", () => {
    assert.ok(folders.includes("runtime") && folders.includes("protocol"), "the scan reaches src/");
    const missing = folders.filter((f) => !existsSync(join(ROOT, "src", f, boundaryFile(f))));
    assert.deepEqual(missing.map((f) => `src/${f}/${boundaryFile(f)}`), []);
  });

  it('every src/*/mod.ts (the CLI: main.ts) opens with a doc comment holding a "Boundary:" sentence', () => {
    const without = folders
      .map((f) => `src/${f}/${boundaryFile(f)}`)
      .filter((file) => existsSync(join(ROOT, file)))
      .filter((file) =>
        !openingComment(readFileSync(join(ROOT, file), "utf8"))?.includes("Boundary:")
      );
    assert.deepEqual(without, [], "open these with /** ... Boundary: ... */ before any import");
  });

  it("a Boundary sentence counts only inside the opening doc comment", () => {
    const holds = (text: string) => openingComment(text)?.includes("Boundary:") ?? false;
    assert.equal(holds("/**\n * Core.\n *\n * Boundary: Web APIs only.\n */\nexport {};\n"), true);
    assert.equal(holds('import "x";\n/**\n * Boundary: too late.\n */\n'), false);
    assert.equal(
      holds("/**\n * Core, no boundary stated.\n */\n// Boundary: not the doc comment\n"),
      false,
    );
    assert.equal(holds("// Boundary: a line comment is not a doc comment\n"), false);
  });
});
