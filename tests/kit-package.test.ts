/**
 * The kit as an author outside this repository gets it: the project packed with `npm pack` (whose
 * prepack builds the kit), the tarball installed into an empty project from the npm cache, and
 * providers written there in plain JavaScript, importing `tracefetch-edge/kit` and
 * `tracefetch-edge/kit/node`, run with plain `node` against a gateway and `tracefetch conformance`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { nodeImportsFrom } from "../scripts/build-kit.ts";
import { ProviderError, type SearchAdapter } from "../src/protocol/provider-contract.ts";
import { gateway, search } from "./support/gateway.ts";
import { cleanEnv, runJson } from "./support/cli.ts";
import { type KitProject, packedKitProject, startProvider } from "./support/packed-kit.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** What the failing provider says, over HTTP and in process alike. */
const UNAVAILABLE = "the index is not built yet";

/** A provider whose adapter fails with a ProviderError that no retry can fix. */
const FAILING_PROVIDER = `
import { ProviderError, serveProvider } from "tracefetch-edge/kit";
import { serveCli } from "tracefetch-edge/kit/node";

const { base } = await serveCli({
  script: "failing-provider",
  usage: "usage: node failing.mjs [--port N] [--host H]",
  flags: [],
  configure: () =>
    serveProvider({
      name: "failing",
      scope: "test",
      async search() {
        throw new ProviderError("adapter_unavailable", ${JSON.stringify(UNAVAILABLE)}, {
          retryable: false,
        });
      },
    }),
});
console.log(\`listening at \${base}/search\`);
`;

/** A small notes provider that keeps every rule: limits, honest empties, its declared identity. */
const NOTES_PROVIDER = `
import { checkName, serveProvider } from "tracefetch-edge/kit";
import { serveCli } from "tracefetch-edge/kit/node";

const NOTES = [
  ["Deadlines", "Every call carries the deadline of the search that made it."],
  ["Backpressure", "A bounded queue says no before the memory runs out."],
  ["Retries", "Retry only what can succeed the second time, and wait as the answer asks."],
  ["Timeouts", "A timeout is a failure with a name, never an empty success."],
].map(([title, text], i) => ({ title, text, locator: \`https://notes.example/\${i + 1}\` }));

function notes(name, scope) {
  return {
    name,
    scope,
    async search({ query, limit }) {
      const words = query.toLowerCase().split(/\\s+/).filter((w) => w !== "");
      const hits = NOTES.filter((n) =>
        words.every((w) => \`\${n.title} \${n.text}\`.toLowerCase().includes(w))
      );
      return {
        candidates: hits.slice(0, limit).map((n) => ({
          title: n.title,
          locator: n.locator,
          snippet: n.text,
          published_at: null,
          metadata: {},
        })),
      };
    },
  };
}

const { base } = await serveCli({
  script: "notes-provider",
  usage: "usage: node notes.mjs --name NAME --scope SCOPE [--port N] [--host H]",
  flags: ["name", "scope"],
  configure: (values) =>
    serveProvider(notes(checkName("--name", values.name), checkName("--scope", values.scope))),
});
console.log(\`listening at \${base}/search\`);
`;

/** An author's TypeScript: it compiles only if the kit's declarations say what the kit does. */
const TYPED_PROVIDER = `
import { ProviderError, type SearchAdapter, serveProvider } from "tracefetch-edge/kit";
import { type Listening, serveCli } from "tracefetch-edge/kit/node";

const adapter: SearchAdapter = {
  name: "typed",
  scope: "test",
  search: ({ query, limit }) =>
    Promise.resolve({ candidates: [{ title: query, locator: "https://typed.example/" }].slice(0, limit) }),
};
// @ts-expect-error: not a code of the provider protocol
new ProviderError("no_such_code", "never thrown");
const wait: number | undefined = new ProviderError("rate_limited", "slow down", { retryAfterMs: 1_000 })
  .retryAfterMs;
export async function start(): Promise<Listening> {
  const { listening } = await serveCli({
    script: "typed",
    usage: "usage: typed",
    flags: ["dir"],
    configure: (values) => {
      const dir: string | undefined = values.dir;
      void dir;
      return serveProvider(adapter);
    },
  });
  return listening;
}
void wait;
`;

/** The part of an attempt that says what failed and what to do about it. */
// deno-lint-ignore no-explicit-any
const record = (a: any) => ({
  outcome: a.outcome,
  code: a.code,
  retryable: a.retryable,
  retry_after_ms: a.retry_after_ms,
});

describe("the packed kit, installed into an empty project and run with plain node", {
  skip: "Deno" in globalThis
    ? "packs with npm and runs the installed package with node; the kit's code is the same under Deno"
    : false,
}, () => {
  let project = "";
  let kit: KitProject | null = null;

  before(async () => {
    kit = await packedKitProject();
    project = kit.dir;
    await writeFile(join(project, "failing.mjs"), FAILING_PROVIDER);
    await writeFile(join(project, "notes.mjs"), NOTES_PROVIDER);
    await writeFile(join(project, "typed.ts"), TYPED_PROVIDER);
  }, { timeout: 90_000 });

  after(() => kit?.remove());

  it("a non-retryable ProviderError reads retryable false, action report, over HTTP exactly as in process", async () => {
    const provider = await startProvider(project, "failing.mjs");
    try {
      const overHttp = await search(
        gateway([{ name: "failing", scope: "test", endpoint: provider.url, timeout_seconds: 5 }]),
      );
      const inProcess: SearchAdapter = {
        name: "exa",
        scope: "test",
        search: () =>
          Promise.reject(
            new ProviderError("adapter_unavailable", UNAVAILABLE, { retryable: false }),
          ),
      };
      const local = await search(
        gateway([{ name: "exa", scope: "test", timeout_seconds: 5 }], {
          ports: { builtins: { exa: inProcess } },
        }),
      );
      const http = overHttp.body.result.candidates[0];
      assert.deepEqual(record(http), {
        outcome: "adapter_unavailable",
        code: "adapter_unavailable",
        retryable: false,
        retry_after_ms: undefined,
      });
      assert.match(http.message, new RegExp(UNAVAILABLE));
      assert.deepEqual(record(http), record(local.body.result.candidates[0]));
      assert.equal(overHttp.body.action, "report");
      assert.equal(local.body.action, "report");
    } finally {
      await provider.stop();
    }
  });

  it("tracefetch conformance passes a well-behaved provider written with the kit", async () => {
    const provider = await startProvider(project, "notes.mjs", [
      "--name",
      "notes",
      "--scope",
      "docs",
    ]);
    try {
      const checked = await runJson([
        "conformance",
        provider.url,
        "--name",
        "notes",
        "--scope",
        "docs",
      ]);
      assert.equal(checked.envelope.code, "ok", JSON.stringify(checked.envelope.result.cases));
      assert.equal(checked.envelope.result.failed, 0);
      assert.equal(checked.code, 0);
    } finally {
      await provider.stop();
    }
  });

  it("the kit's entry reaches no Node module, so a Worker can import it", async () => {
    const entry = join(project, "node_modules", "tracefetch-edge", "dist", "kit", "kit", "mod.js");
    assert.deepEqual(await nodeImportsFrom(entry), []);
    // The check itself sees Node modules: the kit's Node part has some.
    const nodePart = join(project, "node_modules", "tracefetch-edge", "dist", "kit", "kit", "node");
    assert.notDeepEqual(await nodeImportsFrom(join(nodePart, "mod.js")), []);
  });

  it("an author's TypeScript typechecks against the kit's declarations", async () => {
    await run("node", [
      TSC,
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--target",
      "es2022",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
      // The project has no @types/node of its own; the kit's Node part needs Node's types.
      "--typeRoots",
      join(ROOT, "node_modules", "@types"),
      "--types",
      "node",
      "typed.ts",
    ], { cwd: project, env: cleanEnv() }).catch((error: { stdout?: string }) => {
      assert.fail(`tsc refused the author's TypeScript:\n${error.stdout ?? String(error)}`);
    });
  });
});
