import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  formatManifestIssues,
  manifestRefusal,
  MAX_MANIFEST_BYTES,
  parseManifestText,
  validateManifest,
} from "../src/protocol/mod.ts";
import type { ManifestIssue } from "../src/protocol/mod.ts";
import { createGateway } from "../src/http/mod.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { settingsFor } from "./support/gateway.ts";

const V = "tracefetch.providers.v1";
/** A long value is cut to 64 characters, so the line stays readable. */
const NAME_MESSAGE = (got: string) =>
  `must be lowercase letters, digits, _ or -, starting with a letter, at most 64 characters; got "${
    got.length > 64 ? `${got.slice(0, 64)}...` : got
  }"`;
/** The value is never repeated: it may be the secret itself. */
const BINDING_MESSAGE = (_got: string) =>
  "must be the name of an environment variable (uppercase letters, digits or _, not starting with a digit, at most 128 characters), never the secret itself";
const HTTPS_ONLY = "must use https: (http: is allowed only on loopback)";
const NEEDS_ENDPOINT = "is required (only the built-ins workspace, exa and github run without one)";
const RESERVED_SCOPE = (scope: string) =>
  `"${scope}" is reserved (auto, local and public are request scopes)`;

const papers = (extra: Record<string, unknown> = {}) => ({
  name: "papers",
  scope: "papers",
  endpoint: "https://papers.example.org/search",
  ...extra,
});
const one = (provider: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  schema_version: V,
  providers: [provider],
  ...extra,
});

/** The manifest is refused with exactly these issues, and createGateway refuses to start with them. */
function refuses(manifest: unknown, issues: ManifestIssue[], allowLoopback = false) {
  assert.deepEqual(validateManifest(manifest, { allowLoopback }), { ok: false, issues });
  const message = manifestRefusal(issues);
  assert.throws(
    () => createGateway(settingsFor(manifest, {}, { allowLoopback })),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.message, message);
      return true;
    },
  );
  for (const issue of issues) {
    // An empty name cannot be shown; every other provider name is.
    if (issue.provider) {
      assert.ok(message.includes(`provider "${issue.provider}"`), `${message} names the provider`);
    }
    assert.ok(message.includes(`${issue.field}: `), `${message} names ${issue.field}`);
  }
}

/** A one-provider manifest refused with one issue of that provider at providers.0.<field>. */
function refusesProvider(
  provider: Record<string, unknown>,
  field: string,
  message: string,
  allowLoopback = false,
) {
  const issue = { provider: String(provider.name), field: `providers.0.${field}`, message };
  refuses(one(provider), [issue], allowLoopback);
}

function accepts(manifest: unknown, allowLoopback = false) {
  const result = validateManifest(manifest, { allowLoopback });
  assert.equal(result.ok, true, result.ok ? "" : formatManifestIssues(result.issues));
  createGateway(settingsFor(manifest, {}, { allowLoopback }));
  return result.ok ? result.manifest : assert.fail();
}

describe("manifest: names and scopes", () => {
  it("accepts a minimal remote provider and applies every default", () => {
    assert.deepEqual(
      accepts(one({ name: "papers", scope: "papers", endpoint: "https://p.org/s" })),
      {
        providers: [{
          name: "papers",
          scope: "papers",
          endpoint: "https://p.org/s",
          timeout_seconds: 60,
          sensitivity: "public",
          source_class: "candidate",
          isolated: false,
          cost_micros: 0,
          weight: 1,
          max_concurrency: 16,
          auth: { type: "none" },
          cache_ttl_seconds: 0,
          transport: "http",
        }],
        tiers: {},
        default_tier: null,
      },
    );
  });

  it("takes cache_ttl_seconds as an integer from 0 to 86400", () => {
    const entry = (cache_ttl_seconds: unknown) =>
      one({ name: "papers", scope: "papers", endpoint: "https://p.org/s", cache_ttl_seconds });
    assert.equal(accepts(entry(86_400)).providers[0]?.cache_ttl_seconds, 86_400);
    for (const bad of [-1, 86_401, 1.5, "60"]) {
      const result = validateManifest(entry(bad), { allowLoopback: false });
      assert.equal(result.ok, false, String(bad));
      if (!result.ok) assert.equal(result.issues[0]?.field, "providers.0.cache_ttl_seconds");
    }
  });

  it("refuses a name or scope outside ^[a-z][a-z0-9_-]{0,63}$", () => {
    for (const bad of ["Papers", "1papers", "pa pers", "a".repeat(65), "", "papers.org"]) {
      refusesProvider(papers({ name: bad }), "name", NAME_MESSAGE(bad));
      refusesProvider(papers({ scope: bad }), "scope", NAME_MESSAGE(bad));
    }
    accepts(one(papers({ name: "a".repeat(64), scope: "a_b-9" })));
  });

  it("refuses a name declared twice", () => {
    refuses({ schema_version: V, providers: [papers(), papers({ scope: "other" })] }, [
      {
        provider: "papers",
        field: "providers.1.name",
        message: "is declared twice; names must be unique",
      },
    ]);
  });

  it("refuses a reserved built-in name with an endpoint, and runs it in process without", () => {
    for (const name of ["workspace", "exa", "github"]) {
      const scope = name === "workspace" ? "local" : "web";
      refusesProvider(
        { name, scope, endpoint: "https://x.org/s" },
        "endpoint",
        `"${name}" is reserved for the built-in; remove the endpoint or rename`,
      );
    }
    const builtins = [{ name: "workspace", scope: "local" }, { name: "exa", scope: "web" }];
    const manifest = accepts({ schema_version: V, providers: builtins });
    assert.deepEqual(manifest.providers.map((p) => p.transport), ["builtin", "builtin"]);
  });

  it("refuses a provider that is not a built-in and has no endpoint", () => {
    refusesProvider({ name: "papers", scope: "papers" }, "endpoint", NEEDS_ENDPOINT);
  });

  it("refuses the workspace built-in with a scope other than local", () => {
    const message = 'must be "local" for the workspace built-in';
    refusesProvider({ name: "workspace", scope: "docs" }, "scope", message);
  });

  it("refuses the reserved scopes auto, local and public on any other provider", () => {
    for (const scope of ["auto", "local", "public"]) {
      refusesProvider(papers({ scope }), "scope", RESERVED_SCOPE(scope));
      refusesProvider({ name: "exa", scope }, "scope", RESERVED_SCOPE(scope));
    }
  });
});

describe("manifest: endpoints", () => {
  it("refuses an endpoint that is not an absolute URL", () => {
    for (const endpoint of ["/search", "papers.example.org/search", ""]) {
      refusesProvider(papers({ endpoint }), "endpoint", "must be an absolute URL");
    }
  });

  it("requires https: for every host that is not loopback", () => {
    refusesProvider(
      papers({ endpoint: "ftp://papers.example.org/s" }),
      "endpoint",
      "must use https:",
    );
    for (const endpoint of ["http://papers.example.org/s", "http://127.0.0.1.nip.io/s"]) {
      refusesProvider(papers({ endpoint }), "endpoint", HTTPS_ONLY, true);
    }
  });

  it("allows http: only to a loopback host and only when loopback is allowed", () => {
    const message = "is an http: loopback endpoint; set TRACEFETCH_ALLOW_LOOPBACK=1 to allow it";
    for (const endpoint of ["http://127.0.0.1:8/s", "http://localhost:8/s", "http://[::1]:8/s"]) {
      refusesProvider(papers({ endpoint }), "endpoint", message);
      accepts(one(papers({ endpoint })), true);
    }
  });

  it("refuses credentials in the URL", () => {
    const message = "must not carry credentials; use auth.secret to name a binding";
    for (
      const endpoint of ["https://u:pw@papers.example.org/s", "https://u@papers.example.org/s"]
    ) {
      refusesProvider(papers({ endpoint }), "endpoint", message);
    }
  });
});

describe("manifest: timeout, sensitivity and auth", () => {
  it("accepts timeout_seconds 0..300 and refuses values outside", () => {
    refusesProvider(
      papers({ timeout_seconds: -1 }),
      "timeout_seconds",
      "Expected >=0 but received -1",
    );
    refusesProvider(
      papers({ timeout_seconds: 301 }),
      "timeout_seconds",
      "Expected <=300 but received 301",
    );
    assert.equal(accepts(one(papers({ timeout_seconds: 0 }))).providers[0]?.timeout_seconds, 0);
    assert.equal(accepts(one(papers({ timeout_seconds: 300 }))).providers[0]?.timeout_seconds, 300);
  });

  it("accepts only the sensitivities public, account-visible and internal", () => {
    const message = 'Expected ("public" | "account-visible" | "internal") but received "secret"';
    refusesProvider(papers({ sensitivity: "secret" }), "sensitivity", message);
    accepts(one(papers({ sensitivity: "public" })));
    accepts(one(papers({ sensitivity: "account-visible" })));
    accepts(one(papers({ sensitivity: "internal", isolated: true })));
  });

  it("requires isolated true for an internal provider", () => {
    for (const isolated of [false, undefined]) {
      const provider = papers({ sensitivity: "internal", isolated });
      refusesProvider(provider, "isolated", "must be true for an internal provider");
    }
  });

  it("requires gateway-token auth for a sensitive provider and defaults to it", () => {
    for (const sensitivity of ["account-visible", "internal"]) {
      const message = `must be {"type":"gateway-token"} for a sensitive (${sensitivity}) provider`;
      for (const auth of [{ type: "none" }, { type: "bearer", secret: "PAPERS_KEY" }]) {
        refusesProvider(papers({ sensitivity, isolated: true, auth }), "auth", message);
      }
      const spec = accepts(one(papers({ sensitivity, isolated: true }))).providers[0];
      assert.deepEqual(spec?.auth, { type: "gateway-token" });
    }
  });

  it("requires bearer auth to name a binding, never hold a value", () => {
    refusesProvider(papers({ auth: { type: "bearer" } }), "auth.secret", "is required");
    for (const secret of ["papers_key", "sk-abc123", "Bearer X", "", "1KEY"]) {
      const provider = papers({ auth: { type: "bearer", secret } });
      refusesProvider(provider, "auth.secret", BINDING_MESSAGE(secret));
    }
    const manifest = accepts(one(papers({ auth: { type: "bearer", secret: "PAPERS_KEY" } })));
    assert.deepEqual(manifest.providers[0]?.auth, { type: "bearer", secret: "PAPERS_KEY" });
  });
});

describe("manifest: shape, tiers and text", () => {
  it("refuses unknown fields at the top level, in a provider, in auth and in a tier", () => {
    const unknown = "is not a known field";
    refuses({ ...one(papers()), extra: 1 }, [{ field: "extra", message: unknown }]);
    refusesProvider(papers({ command: "run.sh" }), "command", unknown);
    refusesProvider(papers({ auth: { type: "none", token: "x" } }), "auth.token", unknown);
    refuses(one(papers(), { tiers: { fast: { cost_ceiling_micros: 0, burst: 1 } } }), [
      { field: "tiers.fast.burst", message: unknown },
    ]);
  });

  it("refuses a missing or wrong schema_version and missing providers", () => {
    refuses({ schema_version: "tracefetch.providers.v2", providers: [] }, [{
      field: "schema_version",
      message: 'Expected "tracefetch.providers.v1" but received "tracefetch.providers.v2"',
    }]);
    refuses({ providers: [] }, [{ field: "schema_version", message: "is required" }]);
    refuses({ schema_version: V }, [{ field: "providers", message: "is required" }]);
  });

  it("requires default_tier to name a tier", () => {
    const fast = { tiers: { fast: { cost_ceiling_micros: 0 } } };
    refuses(one(papers(), { ...fast, default_tier: "slow" }), [
      { field: "default_tier", message: 'names "slow", which is not in tiers' },
    ]);
    refuses(one(papers(), { default_tier: "fast" }), [
      { field: "default_tier", message: 'names "fast", which is not in tiers' },
    ]);
    assert.equal(accepts(one(papers(), { ...fast, default_tier: "fast" })).default_tier, "fast");
  });

  it("reports every problem at once, each naming its provider and field", () => {
    const providers = [papers({ endpoint: "http://p.org/s" }), { name: "code", scope: "public" }];
    refuses({ schema_version: V, providers }, [
      { provider: "papers", field: "providers.0.endpoint", message: HTTPS_ONLY },
      { provider: "code", field: "providers.1.endpoint", message: NEEDS_ENDPOINT },
      { provider: "code", field: "providers.1.scope", message: RESERVED_SCOPE("public") },
    ]);
  });

  it("refuses manifest text over 1 MiB", () => {
    const base = JSON.stringify(one(papers()));
    const text = base + " ".repeat(MAX_MANIFEST_BYTES + 1 - base.length);
    const message = `is ${MAX_MANIFEST_BYTES + 1} bytes; at most 1048576 are accepted`;
    assert.deepEqual(parseManifestText(text, { allowLoopback: false }), {
      ok: false,
      issues: [{ field: "manifest", message }],
    });
    assert.throws(() => createGateway(settingsFor(text)), ConfigError);
    assert.equal(parseManifestText(text.slice(0, -1), { allowLoopback: false }).ok, true);
  });

  it("refuses text that is not JSON", () => {
    const result = parseManifestText('{"schema_version": ', { allowLoopback: false });
    const issues = result.ok ? [] : result.issues;
    assert.deepEqual(issues.map((i) => i.field), ["manifest"]);
    assert.match(issues[0]?.message ?? "", /^is not valid JSON \(/);
    assert.throws(
      () => createGateway(settingsFor("not json")),
      (e: unknown) =>
        e instanceof ConfigError &&
        /^invalid manifest: manifest: is not valid JSON/.test(e.message),
    );
  });

  it("tolerates a leading BOM in manifest text", () => {
    const text = `\uFEFF${JSON.stringify(one(papers()))}`;
    assert.equal(parseManifestText(text, { allowLoopback: false }).ok, true);
    createGateway(settingsFor(text));
  });
});
