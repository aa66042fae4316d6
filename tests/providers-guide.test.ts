/**
 * docs/providers.md as a newcomer follows it: its examples are taken from the Markdown (the fenced
 * blocks whose info string says `file=NAME`), written into an empty project with the packed kit
 * installed, and run there with plain `node` (and `deno`); the exchanges it shows (the blocks that
 * say `exchange=NAME`) are replayed against them, and its manifest lists them in a gateway.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createGateway } from "../src/http/mod.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { keyPair } from "./support/auth-keys.ts";
import { cleanEnv, runJson } from "./support/cli.ts";
import { assertEnvelope, search, settingsFor } from "./support/gateway.ts";
import {
  type KitProject,
  packedKitProject,
  ROOT,
  type Started,
  startProgram,
  startProvider,
} from "./support/packed-kit.ts";

const run = promisify(execFile);
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const DENO = join(ROOT, "node_modules", "deno", "deno");

const GUIDE = readFileSync(new URL("../docs/providers.md", import.meta.url), "utf8");

/** Every fenced block whose info string is `LANG KEY=VALUE`, in order. */
function fenced(key: string): Array<{ lang: string; name: string; body: string }> {
  const blocks = [];
  const pattern = /^```(\w+) (\w+)=([\w.-]+)\n([\s\S]*?)^```$/gm;
  for (const m of GUIDE.matchAll(pattern)) {
    if (m[2] === key) {
      blocks.push({ lang: m[1] as string, name: m[3] as string, body: m[4] as string });
    }
  }
  return blocks;
}

const FILES = new Map(fenced("file").map((b) => [b.name, b.body]));

/** The guide's file, failing with the names it does have when it is not there. */
function file(name: string): string {
  const body = FILES.get(name);
  assert.ok(body, `docs/providers.md has a block \`file=${name}\` (it has ${[...FILES.keys()]})`);
  return body;
}

type Exchange = { name: string; request: string; status: number; body: string };

/** The curl exchanges: the body curl sends, and the status and body the guide says come back. */
const EXCHANGES: Exchange[] = (() => {
  const blocks = fenced("exchange");
  const names = [...new Set(blocks.map((b) => b.name))];
  return names.map((name) => {
    const curl = blocks.find((b) => b.name === name && b.lang === "sh");
    const http = blocks.find((b) => b.name === name && b.lang === "http");
    assert.ok(curl && http, `exchange ${name} has a sh block and an http block`);
    const request = /-d '([^']*)'/.exec(curl.body)?.[1];
    assert.ok(request, `exchange ${name}: curl sends a body with -d '...'`);
    const [head = "", body = ""] = http.body.split("\n\n");
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
    assert.match(head, /^content-type: application\/json$/m, `exchange ${name}: a JSON answer`);
    return { name, request, status, body: body.trim() };
  });
})();

/** Where the guide's manifest points; the tests point it at the provider they started. */
const GUIDE_ENDPOINT = "http://127.0.0.1:9101/search";

/** A gateway over the guide's manifest, its endpoint replaced by `url`. */
function guideGateway(url: string) {
  const manifest = file("notes-manifest.json");
  assert.ok(manifest.includes(GUIDE_ENDPOINT), `the guide's manifest lists ${GUIDE_ENDPOINT}`);
  return createGateway(
    settingsFor(manifest.replace(GUIDE_ENDPOINT, url), {}, { allowLoopback: true }),
    { ...nodePorts() },
  );
}

/** The guide's search answer, as the gateway's attempt for it must carry it. */
const ANSWER = (() => {
  const searchExchange = EXCHANGES.find((x) => x.name === "search");
  assert.ok(searchExchange, "the guide shows a search exchange");
  return JSON.parse(searchExchange.body);
})();

/** Searches the guide's query through a gateway over the guide's manifest, expecting `ok`. */
async function searchedThroughGateway(url: string) {
  const { body } = await search(guideGateway(url), { q: "deadline" });
  assert.equal(body.code, "ok", JSON.stringify(body.result?.candidates ?? body));
  const [attempt] = body.result.candidates;
  assert.equal(attempt.provider, "notes");
  assert.equal(attempt.outcome, "success");
  assert.deepEqual(
    // deno-lint-ignore no-explicit-any
    attempt.candidates.map(({ truncated: _, ...c }: any) => c),
    ANSWER.candidates,
  );
  assert.equal(body.result.merged[0].locator, ANSWER.candidates[0].locator);
}

/** The kit's conformance through the repository's `tracefetch` bin: exit 0, every case passed. */
async function passesConformance(url: string) {
  const checked = await runJson(["conformance", url, "--name", "notes", "--scope", "notes"]);
  const cases = checked.envelope.result.cases;
  assert.equal(checked.code, 0, JSON.stringify(cases));
  assert.equal(checked.envelope.code, "ok");
  assert.ok(cases.length >= 9, `at least the 9 cases of docs/protocol.md, got ${cases.length}`);
  // deno-lint-ignore no-explicit-any
  assert.deepEqual(cases.filter((c: any) => c.verdict !== "pass"), []);
}

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

describe("docs/providers.md: the exchanges", () => {
  it("the guide shows the exchanges every provider must answer: a search, an honest empty (200, no candidates), a malformed request (400), an unknown action (501)", () => {
    assert.deepEqual(EXCHANGES.map((x) => [x.name, x.status]), [
      ["search", 200],
      ["honest-empty", 200],
      ["missing-query", 400],
      ["unknown-action", 501],
    ]);
    assert.deepEqual(JSON.parse(EXCHANGES[1]?.body ?? "").candidates, []);
  });
});

describe("docs/providers.md: its providers, written as the guide shows, run with plain node", {
  skip: "Deno" in globalThis
    ? "packs the project with npm and runs the examples with node; deno runs its example from here"
    : false,
}, () => {
  let project: KitProject | null = null;
  let dir = "";
  let plain: Started | null = null;
  let kit: Started | null = null;

  before(async () => {
    project = await packedKitProject();
    dir = project.dir;
    for (const [name, body] of FILES) await writeFile(join(dir, name), body);
    [plain, kit] = await Promise.all([
      startProvider(dir, "plain-node-provider.mjs", [], { PORT: "0" }),
      startProvider(dir, "kit-node-provider.mjs"),
    ]);
  }, { timeout: 60_000 });

  after(async () => {
    await Promise.all([plain?.stop(), kit?.stop()]);
    await project?.remove();
  });

  it("the node:http provider answers each exchange with the guide's status and bytes", async () => {
    for (const x of EXCHANGES) {
      const res = await post((plain as Started).url, x.request);
      assert.equal(res.status, x.status, x.name);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal(await res.text(), x.body, x.name);
    }
  });

  it("the kit provider on Node answers each exchange with the same status and code, and the same answers", async () => {
    for (const x of EXCHANGES) {
      const res = await post((kit as Started).url, x.request);
      assert.equal(res.status, x.status, x.name);
      const got = await res.json();
      const expected = JSON.parse(x.body);
      if (x.status === 200) assert.deepEqual(got, expected, x.name);
      else assert.equal(got.code, expected.code, x.name);
    }
  });

  it("the node:http provider, listed by the guide's manifest, is searched through a gateway: ok, with its candidates", async () => {
    await searchedThroughGateway((plain as Started).url);
  });

  it("the kit provider on Node, listed by the guide's manifest, is searched through a gateway: ok, with its candidates", async () => {
    await searchedThroughGateway((kit as Started).url);
  });

  it("tracefetch conformance passes the node:http provider: exit 0, every case passed", async () => {
    await passesConformance((plain as Started).url);
  });

  it("tracefetch conformance passes the kit provider on Node: exit 0, every case passed", async () => {
    await passesConformance((kit as Started).url);
  });

  it("the kit provider on Deno type-checks, runs with deno and is searched through a gateway", async () => {
    await run(DENO, ["check", "kit-deno-provider.ts"], {
      cwd: dir,
      env: { ...cleanEnv(), DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    }).catch((error: { stderr?: string }) => {
      assert.fail(`deno check refused the guide's Deno provider:\n${error.stderr ?? error}`);
    });
    const deno = await startProgram(dir, DENO, [
      "run",
      "--allow-net",
      "--allow-env",
      "kit-deno-provider.ts",
    ], { PORT: "0", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" });
    try {
      await searchedThroughGateway(deno.url);
    } finally {
      await deno.stop();
    }
  });

  it("the kit provider on Workers type-checks without Node's types, and its entry answers the guide's exchanges", async () => {
    await run("node", [
      TSC,
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--allowJs",
      "--checkJs",
      "--target",
      "es2022",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
      // A Worker has the web platform's globals and no Node module; the project has no @types.
      "--lib",
      "es2022,dom",
      "kit-worker-provider.ts",
    ], { cwd: dir, env: cleanEnv() }).catch((error: { stdout?: string }) => {
      assert.fail(`tsc refused the guide's Worker provider:\n${error.stdout ?? error}`);
    });
    const worker = await import(pathToFileURL(join(dir, "kit-worker-provider.ts")).href);
    for (const x of EXCHANGES) {
      const res: Response = await worker.default.fetch(
        new Request("https://notes.example.workers.dev/search", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: x.request,
        }),
        {},
      );
      assert.equal(res.status, x.status, x.name);
      const got = await res.json();
      const expected = JSON.parse(x.body);
      if (x.status === 200) assert.deepEqual(got, expected, x.name);
      else assert.equal(got.code, expected.code, x.name);
    }
  });

  it("the kit's Node examples type-check against the kit's declarations", async () => {
    await run("node", [
      TSC,
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--allowJs",
      "--checkJs",
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
      "kit-node-provider.mjs",
      "kit-token-provider.mjs",
    ], { cwd: dir, env: cleanEnv() }).catch((error: { stdout?: string }) => {
      assert.fail(`tsc refused the guide's Node examples:\n${error.stdout ?? error}`);
    });
  });

  it("the gateway-token provider answers the gateway's signed searches and refuses a request without a token with 401 invalid_request", async () => {
    const signing = await keyPair("EdDSA", "guide-1");
    // The provider needs the gateway's address, and the gateway the provider's: listen first.
    let app: ReturnType<typeof createGateway> | null = null;
    const served = await listen((request) => (app as NonNullable<typeof app>).fetch(request));
    const gatewayUrl = `http://127.0.0.1:${served.port}`;
    const provider = await startProvider(dir, "kit-token-provider.mjs", ["--gateway", gatewayUrl]);
    try {
      const entry = { name: "notes", scope: "notes", endpoint: provider.url, timeout_seconds: 5 };
      const manifest = (auth: string) => ({
        schema_version: "tracefetch.providers.v1",
        providers: [{ ...entry, auth: { type: auth } }],
      });
      app = createGateway(
        settingsFor(manifest("gateway-token"), {
          TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
          // The provider checks `iss` against the --gateway it was given.
          TRACEFETCH_GATEWAY_ISSUER: gatewayUrl,
        }, { allowLoopback: true }),
        { ...nodePorts() },
      );
      const signed = assertEnvelope(
        await (await fetch(`${gatewayUrl}/v1/search?q=deadline`)).json(),
      );
      assert.equal(signed.code, "ok", JSON.stringify(signed.result?.candidates ?? signed));
      assert.equal(signed.result.candidates[0].candidate_count, 1);

      const unsigned = await post(provider.url, EXCHANGES[0]?.request ?? "");
      assert.equal(unsigned.status, 401);
      assert.match(unsigned.headers.get("www-authenticate") ?? "", /^Bearer /);
      assert.equal((await unsigned.json()).code, "invalid_request");

      // What the guide's outcome table says a missing `auth` looks like from the gateway.
      const { body } = await search(
        createGateway(settingsFor(manifest("none"), {}, { allowLoopback: true }), {
          ...nodePorts(),
        }),
        { q: "deadline" },
      );
      const [attempt] = body.result.candidates;
      assert.deepEqual([attempt.outcome, attempt.code, attempt.retryable], [
        "search_failed",
        "invalid_request",
        false,
      ]);
    } finally {
      await provider.stop();
      await served.close();
    }
  });
});
