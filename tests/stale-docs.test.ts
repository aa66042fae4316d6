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

  it("the README's set-up is two commands, npm install && npm start and npm test: no system package", () => {
    const block = /^```sh\n([\s\S]*?)```/m.exec(read("README.md"))?.[1] ?? "";
    const commands = block.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim())
      .filter((l) => l !== "");
    assert.deepEqual(commands, ["npm install && npm start", "npm test"]);
    assert.doesNotMatch(read("README.md"), /apt-get install chromium|\/usr\/bin\/chromium/);
  });

  it(".ci/run is npm ci && npm test, after a block of its own installing redis-server when missing", () => {
    const lines = read(".ci/run").split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
    assert.deepEqual(lines.slice(-2), ["npm ci --no-audit --no-fund", "npm test"]);
    const redis = /# --- Redis[^\n]*\n([\s\S]*?)# --- end of Redis/.exec(read(".ci/run"))?.[1];
    assert.ok(redis, "a Redis block");
    assert.match(redis, /command -v redis-server/);
    assert.match(redis, /apt-get update\n.*apt-get install -y [^\n]*redis-server/);
    // The metrics acceptance test scrapes with a real Prometheus, installed the same way.
    assert.match(redis, /command -v prometheus/);
    assert.match(redis, /apt-get install -y [^\n]*prometheus/);
    assert.match(redis, /\[ "\$\(id -u\)" -eq 0 \] \|\| sudo="sudo"/, "sudo only when not root");
    assert.doesNotMatch(read(".ci/run"), /apt-get install[^\n]*chromium/);
  });

  it("the tarball npm pack leaves in the checkout is ignored by git", async () => {
    const { name, version } = JSON.parse(read("package.json")) as { name: string; version: string };
    const { execFile } = await import("node:child_process");
    const ignored = await new Promise<boolean>((resolve) =>
      execFile(
        "git",
        ["check-ignore", "--no-index", "-q", `${name}-${version}.tgz`],
        { cwd: new URL("../", import.meta.url) },
        (error) => resolve(error === null),
      )
    );
    assert.ok(ignored, `${name}-${version}.tgz is not in .gitignore`);
  });

  it("docs/benchmarks.md says npm run bench reports and does not gate", () => {
    assert.match(read("docs/benchmarks.md"), /reports[^.]*does not (gate|fail)/i);
  });
});
