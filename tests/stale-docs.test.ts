/**
 * Words in the docs that once went stale stay fixed: each phrase below described something that
 * was not (or no longer) true, and the facts the docs must state are checked against the code.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
const DOCS = [
  "README.md",
  "docs/architecture.md",
  "docs/benchmarks.md",
  "docs/cli.md",
  "docs/deploy.md",
  "docs/envelope.md",
  "docs/protocol.md",
  "docs/providers.md",
  "docs/security.md",
];

/** Phrases that were stale, with what made them so. */
const STALE: Array<[RegExp, string]> = [
  [/later,\s+`\/\.well-known\/jwks\.json`/, "the JWKS route exists"],
  [/\bwill (read|have|stream|print)\b/, "the CLI and the done event exist: present tense"],
  [/Node 20 or later/, "package.json engines names a minor version"],
  [
    /\(`none`, `fix_input`, `login`, `check_access`, `retry`, `report`\)/,
    "the actions include connect",
  ],
];

describe("the docs say what is true", () => {
  for (const [phrase, why] of STALE) {
    it(`no doc says ${phrase.source} (${why})`, () => {
      for (const path of DOCS) {
        const hit = read(path).split("\n").findIndex((line) => phrase.test(line));
        assert.equal(hit, -1, `${path}:${hit + 1} is stale: ${why}`);
      }
    });
  }

  it("the README's Node version is package.json's engines", () => {
    const engines = JSON.parse(read("package.json")).engines.node as string;
    const version = /^>=(\d+\.\d+)$/.exec(engines)?.[1];
    assert.ok(version !== undefined, engines);
    assert.match(read("README.md"), new RegExp(`Node ${version.replace(".", "\\.")} or later`));
  });

  it("the README lists every action, connect included", () => {
    for (
      const action of ["none", "fix_input", "login", "check_access", "retry", "report", "connect"]
    ) {
      assert.match(read("README.md"), new RegExp(`\`${action}\``));
    }
  });

  it("docs/envelope.md describes the mining block", () => {
    const envelope = read("docs/envelope.md");
    assert.match(envelope, /^## Mining$/m);
    for (const field of ["state", "configured", "recorded", "health"]) {
      assert.match(envelope, new RegExp(`\\| \`${field}\``));
    }
  });

  it("docs/benchmarks.md says npm run bench reports and does not gate", () => {
    assert.match(read("docs/benchmarks.md"), /reports[^.]*does not (gate|fail)/i);
  });
});
