/**
 * Configuration from the environment: every variable is parsed by readSettings, once per
 * composition root, one grammar per kind; a value that is not understood stops the start with one
 * line naming the variable.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BOOLEAN_VARIABLES, type Env, type EnvSettings, readSettings } from "../src/config/mod.ts";
import { VERSION } from "../src/protocol/version.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { parseCidr } from "../src/io/ip-rules.ts";
import { createGateway } from "../src/http/mod.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import { cleanEnv } from "./support/cli.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Where each boolean variable lands in the parsed configuration. */
const BOOLEANS: Record<(typeof BOOLEAN_VARIABLES)[number], (c: EnvSettings) => boolean> = {
  TRACEFETCH_ALLOW_LOOPBACK: (c) => c.allowLoopback,
  TRACEFETCH_REQUIRE_AUTH: (c) => c.auth.requireAuth,
  TRACEFETCH_SUSPEND_PROVIDERS: (c) => c.suspendProviders,
  TRACEFETCH_DESCRIBE_PROVIDERS: (c) => c.describeProviders,
  TRACEFETCH_API_DOCS: (c) => c.apiDocs === true,
  TRACEFETCH_TRACE_RAW_QUERIES: (c) => c.mining.rawQueries,
  TRACEFETCH_TRACE_RAW_LOCATORS: (c) => c.mining.rawLocators,
  TRACEFETCH_MINING_CONFIRMED: (c) => c.mining.confirmed,
};

/** Where each number variable lands, and its default. */
const NUMBERS: Array<[string, (c: EnvSettings) => number, number]> = [
  ["PORT", (c) => c.port, 8787],
  ["TRACEFETCH_MAX_PROVIDERS", (c) => c.maxProviders, 32],
  ["TRACEFETCH_MAX_INFLIGHT", (c) => c.maxInflight, 64],
  ["TRACEFETCH_HEADERS_TIMEOUT_MS", (c) => c.headersTimeoutMs, 10_000],
  ["TRACEFETCH_BODY_TIMEOUT_MS", (c) => c.bodyTimeoutMs, 10_000],
  ["TRACEFETCH_TRACE_BACKLOG", (c) => c.mining.backlog, 1_000],
  ["TRACEFETCH_TRACE_FILE_MAX_BYTES", (c) => c.mining.fileMaxBytes, 64 * 1_048_576],
  ["TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS", (c) => c.mining.webhookTimeoutMs, 5_000],
];

/** A key source, so that TRACEFETCH_REQUIRE_AUTH may be on. */
const KEYS = {
  TRACEFETCH_AUTH_SECRET: "s".repeat(32),
  TRACEFETCH_AUTH_ISSUER: ISSUER,
  TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
};

/** The environment as a composition root parses it. */
const configFromEnv = (env: Env): EnvSettings => readSettings(env, { parseCidr }).env;

const refusal = (name: string, value: string) =>
  `${name} must be one of 1/true/yes/on or 0/false/no/off, got ${JSON.stringify(value)}`;

describe("readSettings: one grammar per kind of value", () => {
  it("every boolean variable accepts 1/true/yes/on and 0/false/no/off, in any case", () => {
    assert.deepEqual(Object.keys(BOOLEANS).sort(), [...BOOLEAN_VARIABLES].sort());
    const spellings: Array<[string, boolean]> = [
      ["1", true],
      ["true", true],
      ["TRUE", true],
      ["Yes", true],
      ["on", true],
      [" On ", true],
      ["0", false],
      ["false", false],
      ["No", false],
      ["OFF", false],
    ];
    for (const [name, read] of Object.entries(BOOLEANS)) {
      const env = name === "TRACEFETCH_REQUIRE_AUTH" ? KEYS : {};
      for (const [value, want] of spellings) {
        assert.equal(read(configFromEnv({ ...env, [name]: value })), want, `${name}=${value}`);
      }
    }
  });

  it("any other boolean value is refused with one line naming the variable and what it accepts", () => {
    for (const name of BOOLEAN_VARIABLES) {
      for (const value of ["maybe", "2", "enabled", "y", "truee"]) {
        assert.throws(
          () => configFromEnv({ [name]: value }),
          (error: unknown) =>
            error instanceof ConfigError && error.message === refusal(name, value),
          `${name}=${value}`,
        );
      }
    }
  });

  it("an empty or blank value counts as unset, for every variable", () => {
    const defaults = configFromEnv({});
    assert.equal(defaults.allowLoopback, false);
    assert.equal(defaults.auth.requireAuth, false);
    assert.equal(defaults.suspendProviders, true, "suspension is on unless set off");
    assert.equal(defaults.manifest, null);
    assert.equal(defaults.host, "127.0.0.1");
    const names = [
      ...BOOLEAN_VARIABLES,
      ...NUMBERS.map(([name]) => name),
      "HOST",
      "TRACEFETCH_MANIFEST",
      "TRACEFETCH_AUTH_SECRET",
      "TRACEFETCH_SIGNING_JWK",
      "TRACEFETCH_TRUSTED_PROXIES",
    ];
    for (const blank of ["", "  "]) {
      const env = Object.fromEntries(names.map((name) => [name, blank]));
      assert.deepEqual(configFromEnv(env), defaults, JSON.stringify(blank));
    }
  });

  it("numbers are positive integers (PORT may be 0, at most 65535); anything else is refused naming the variable", () => {
    for (const [name, read, fallback] of NUMBERS) {
      assert.equal(read(configFromEnv({})), fallback, `${name} default`);
      assert.equal(read(configFromEnv({ [name]: " 12 " })), 12, name);
      const refused = ["-1", "1.5", "1e3", "12ms", "0x10", "ten"];
      if (name !== "PORT") refused.push("0");
      for (const value of refused) {
        assert.throws(
          () => configFromEnv({ [name]: value }),
          (error: unknown) =>
            error instanceof ConfigError &&
            error.message.startsWith(`${name} must be `) &&
            error.message.endsWith(`got ${JSON.stringify(value)}`),
          `${name}=${value}`,
        );
      }
    }
    assert.equal(configFromEnv({ PORT: "0" }).port, 0);
    assert.throws(
      () => configFromEnv({ PORT: "65536" }),
      /PORT must be an integer from 0 to 65535/,
    );
  });

  it("TRACEFETCH_TRUSTED_PROXIES lists IPv4 and IPv6 addresses and CIDR ranges; a bad entry stops the start in one line naming it", () => {
    const listed = configFromEnv({
      TRACEFETCH_TRUSTED_PROXIES: " 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1,, ",
    }).trustedProxies;
    // Each range in its own family: an address alone is a /32 or a /128.
    assert.deepEqual(listed.map((range) => range.bits), [8, 32, 8, 128]);
    assert.deepEqual(listed.map((range) => range.address.kind()), ["ipv4", "ipv4", "ipv6", "ipv6"]);
    assert.deepEqual(configFromEnv({}).trustedProxies, []);
    for (
      const entry of [
        "10.0.0.0/33",
        "10.0.0/8",
        "010.0.0.1",
        "fd00::/129",
        "fd00::1::2",
        "proxy.internal",
        "10.0.0.0/8/1",
        "10.0.0.0/",
        "10.0.0.1:80",
      ]
    ) {
      assert.throws(
        () => configFromEnv({ TRACEFETCH_TRUSTED_PROXIES: `10.0.0.1, ${entry}` }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith("TRACEFETCH_TRUSTED_PROXIES must list IP addresses") &&
          error.message.endsWith(`got ${JSON.stringify(entry)}`) &&
          !error.message.includes("\n"),
        entry,
      );
    }
  });

  it("TRACEFETCH_TRUSTED_PROXIES set is refused by a reader of the settings without parseCidr; unset, it needs none", () => {
    assert.deepEqual(readSettings({ TRACEFETCH_TRUSTED_PROXIES: " , " }).env.trustedProxies, []);
    assert.throws(
      () => readSettings({ TRACEFETCH_TRUSTED_PROXIES: "10.0.0.0/8" }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          "TRACEFETCH_TRUSTED_PROXIES cannot be read by this reader of the settings",
    );
  });

  it("a TRACEFETCH_* name that is a slip for a variable is told at start with the one it likely meant, and ignored", () => {
    const env = {
      TRACEFETCH_MAX_INFLIHGT: "4",
      TRACEFETCH_STATE_SECERT: "x",
      TRACEFETCH_FUZZ_RUNS: "9",
      TRACEFETCH_TOKEN: "t",
    };
    const read = configFromEnv(env);
    assert.deepEqual(read.warnings, [
      "TRACEFETCH_MAX_INFLIHGT is not a variable this gateway reads (did you mean TRACEFETCH_MAX_INFLIGHT?): it is ignored",
      "TRACEFETCH_STATE_SECERT is not a variable this gateway reads (did you mean TRACEFETCH_STATE_SECRET?): it is ignored",
    ]);
    assert.equal(read.maxInflight, configFromEnv({}).maxInflight, "the slip sets nothing");
    const warnings: string[] = [];
    createGateway(settingsFor(manifestOf([]), env), { onWarning: (l) => warnings.push(l) });
    assert.ok(
      warnings.some((l) => l.includes("did you mean TRACEFETCH_MAX_INFLIGHT?")),
      warnings.join("\n"),
    );
  });

  it("a refused value is quoted on one line, however it is spelt", () => {
    assert.throws(
      () => configFromEnv({ TRACEFETCH_ALLOW_LOOPBACK: "y\nes" }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes("\n"),
    );
  });
});

describe("the gateway takes its settings from readSettings", () => {
  const open = manifestOf([{ name: "notes", endpoint: "https://notes.example/search" }]);

  for (const value of ["true", "yes", "ON", "1"]) {
    it(`TRACEFETCH_REQUIRE_AUTH=${value} with a key source: an anonymous GET /v1/providers is 401`, async () => {
      const app = createGateway(settingsFor(open, { ...KEYS, TRACEFETCH_REQUIRE_AUTH: value }));
      const res = await app.request("/v1/providers");
      assert.equal(res.status, 401);
      assert.equal(assertEnvelope(await res.json()).code, "unauthorized");
      assert.equal((await app.request("/v1/status")).status, 200, "status stays open");
    });
  }

  it("TRACEFETCH_REQUIRE_AUTH=false with a key source: anonymous callers are served", async () => {
    const app = createGateway(settingsFor(open, { ...KEYS, TRACEFETCH_REQUIRE_AUTH: "false" }));
    assert.equal((await app.request("/v1/providers")).status, 200);
  });

  it("TRACEFETCH_REQUIRE_AUTH=maybe: the gateway refuses to start, naming the variable", () => {
    for (const name of BOOLEAN_VARIABLES) {
      assert.throws(
        () => createGateway(settingsFor(open, { ...KEYS, [name]: "maybe" })),
        (error: unknown) =>
          error instanceof ConfigError && error.message === refusal(name, "maybe"),
      );
    }
  });

  it("TRACEFETCH_ALLOW_LOOPBACK=true permits http: loopback endpoints; unset, the refusal names the variable", () => {
    const loopback = manifestOf([{ name: "notes", endpoint: "http://127.0.0.1:9/search" }]);
    createGateway(settingsFor(loopback, { TRACEFETCH_ALLOW_LOOPBACK: "true" }));
    assert.throws(
      () => createGateway(settingsFor(loopback, { TRACEFETCH_ALLOW_LOOPBACK: "" })),
      (error: unknown) =>
        error instanceof ConfigError && /TRACEFETCH_ALLOW_LOOPBACK/.test(error.message),
    );
  });

  it("the in-flight and provider limits come from the environment unless given", async () => {
    const env = { TRACEFETCH_MAX_INFLIGHT: "3", TRACEFETCH_MAX_PROVIDERS: "5" };
    const status = async (app: ReturnType<typeof createGateway>) =>
      assertEnvelope(await (await app.request("/v1/status")).json()).result;
    const fromEnv = await status(createGateway(settingsFor(open, env)));
    assert.deepEqual([fromEnv.max_inflight, fromEnv.max_providers], [3, 5]);
    const given = await status(createGateway(settingsFor(open, env, { maxInflight: 7 })));
    assert.deepEqual([given.max_inflight, given.max_providers], [7, 5]);
  });

  it("/v1/status reports package.json's version", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    assert.equal(VERSION, pkg.version);
    const app = createGateway(settingsFor(open));
    const body = assertEnvelope(await (await app.request("/v1/status")).json());
    assert.equal(body.result.version, pkg.version);
  });
});

/** Runs a runtime entry to its exit with a clean environment plus `env`. */
function runEntry(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not exit: ${stdout}${stderr}`));
    }, 30_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("a bad variable stops the start: one line, exit 2", () => {
  const env = { TRACEFETCH_REQUIRE_AUTH: "maybe", PORT: "0" };
  const line = `tracefetch: ${refusal("TRACEFETCH_REQUIRE_AUTH", "maybe")}\n`;

  it("npm start (node src/runtime/node.ts)", async () => {
    // "node", not process.execPath: under `deno test` that is deno.
    const run = await runEntry("node", ["--import", "tsx", "src/runtime/node.ts"], env);
    assert.deepEqual([run.code, run.stderr, run.stdout], [2, line, ""]);
  });

  it("deno task dev (deno run src/runtime/deno.ts)", async () => {
    const run = await runEntry("./node_modules/deno/deno", [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "src/runtime/deno.ts",
    ], { ...env, NO_COLOR: "1" });
    assert.deepEqual([run.code, run.stderr, run.stdout], [2, line, ""]);
  });
});
