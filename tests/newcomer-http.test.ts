/**
 * What a newcomer meets over HTTP: `?pretty=1` on every GET, an index at `GET /`, "did you mean"
 * for a mistyped request field, unknown scopes and providers answered with the ones the caller may
 * use (never a hidden one), an empty manifest said to be empty, and a merged entry's locator shown
 * tidy.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { SignJWT } from "jose";
import { createGateway } from "../src/http/mod.ts";
import { dedupKey, shownLocator } from "../src/core/dedup-key.ts";
import { nearestName } from "../src/protocol/did-you-mean.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway, manifestOf, settingsFor } from "./support/gateway.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));

/** Text indented as `?pretty=1` promises: two spaces and a trailing newline. */
const indented = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

let provider: TestServer;
let app: ReturnType<typeof gateway>;

before(async () => {
  provider = await startServer(
    answer("papers", "papers", [{ title: "Deadlines", locator: "https://x.org/deadline" }]),
  );
  app = gateway([{ name: "papers", endpoint: provider.url }]);
});
after(async () => {
  await provider.close();
});

async function get(path: string, init: RequestInit = {}) {
  const res = await app.request(path, init);
  const text = await res.text();
  return { res, text, body: JSON.parse(text) };
}

describe("pretty=1: indented JSON on every GET route, for people reading curl", () => {
  const routes = ["/v1/search?q=deadline", "/v1/providers", "/v1/status", "/"];

  for (const path of routes) {
    it(`GET ${path} with pretty=1 is the same answer, indented by two spaces with a trailing newline`, async () => {
      const join = path.includes("?") ? "&" : "?";
      const headers = { "x-request-id": "same-id" };
      const plain = await get(path, { headers });
      const pretty = await get(`${path}${join}pretty=1`, { headers });
      assert.equal(pretty.res.status, plain.res.status);
      assert.equal(pretty.text, indented(pretty.body));
      assert.ok(!plain.text.includes("\n"), "without pretty the answer is one line");
      assertEnvelope(pretty.body);
      assert.equal(pretty.res.headers.get("content-type"), plain.res.headers.get("content-type"));
      // A search's latencies differ from one run to the next; everything else is the same.
      const stable = (b: Record<string, unknown>) => ({
        ...b,
        result: path === "/v1/search?q=deadline" ? null : b.result,
      });
      assert.deepEqual(stable(pretty.body), stable(plain.body));
    });
  }

  it("a JSON Schema and a refusal (404, 405, a bad search) are indented too", async () => {
    for (const path of ["/schemas/envelope.json", "/nowhere", "/v1/search?q=x&limit=0"]) {
      const { text, body } = await get(`${path}${path.includes("?") ? "&" : "?"}pretty=1`);
      assert.equal(text, indented(body), path);
    }
  });

  it("pretty=0 is compact, as is the same request with curl's User-Agent and no pretty", async () => {
    for (
      const [path, headers] of [
        ["/v1/status?pretty=0", {}],
        ["/v1/status", { "user-agent": "curl/8.5.0" }],
      ] as const
    ) {
      const { text } = await get(path, { headers });
      assert.ok(!text.includes("\n"), `${path} is one line`);
    }
  });

  it("pretty is no search field: GET strips it before the strict check; a body with it is refused with a hint", async () => {
    const { res, body } = await get("/v1/search?q=deadline&pretty=1");
    assert.deepEqual([res.status, body.code], [200, "ok"]);
    assert.equal(body.result.query, "deadline");
    const posted = await app.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"query":"deadline","pretty":1}',
    });
    const refused = assertEnvelope(await posted.json());
    assert.deepEqual([posted.status, refused.code, refused.error.field], [
      400,
      "unknown_field",
      "pretty",
    ]);
    assert.match(refused.error.message, /pretty=1 is a query parameter of the GET routes/);
  });

  it("pretty with another value, or twice, is 400 invalid_field naming pretty, on search and elsewhere", async () => {
    for (
      const path of [
        "/v1/status?pretty=yes",
        "/?pretty=",
        "/v1/providers?pretty=1&pretty=1",
        "/v1/search?q=x&pretty=true",
        "/v1/search?q=x&pretty=1&pretty=0",
      ]
    ) {
      const { res, body } = await get(path);
      assertEnvelope(body);
      assert.deepEqual(
        [res.status, body.code, body.error.field],
        [400, "invalid_field", "pretty"],
        path,
      );
    }
    // The route's own refusal comes first: a missing route stays a 404.
    const { res } = await get("/nowhere?pretty=yes");
    assert.equal(res.status, 404);
  });

  it("a stream is unaffected: NDJSON stays one compact event per line", async () => {
    const res = await app.request("/v1/search?q=deadline&stream=ndjson&pretty=1");
    assert.equal(res.headers.get("content-type"), "application/x-ndjson; charset=utf-8");
    const lines = (await res.text()).split("\n").filter((l) => l !== "");
    assert.ok(lines.length >= 3);
    for (const line of lines) assert.equal(line, JSON.stringify(JSON.parse(line)));
  });
});

describe("GET /: an index of the gateway", () => {
  it("answers an index envelope: the routes with their methods, the version, schema links that resolve and docs that exist", async () => {
    const { res, body } = await get("/");
    assert.equal(res.status, 200);
    assertEnvelope(body);
    assert.deepEqual([body.command, body.code, body.ok], ["index", "ok", true]);
    const { result } = body;
    assert.equal(result.name, "tracefetch-edge");
    assert.equal(result.version, pkg.version);
    assert.deepEqual(result.routes.map((r: { path: string }) => r.path), [
      "/",
      "/v1/search",
      "/v1/expand",
      "/v1/fetch",
      "/v1/crawl",
      "/v1/verify",
      "/v1/refresh",
      "/v1/providers",
      "/v1/status",
      "/v1/doctor",
      "/mcp",
      "/metrics",
      "/schemas/{name}.json",
      "/.well-known/jwks.json",
      "/page/{name}",
      "/openapi.json",
      "/docs",
      "/docs/scalar.js",
    ]);
    const search = result.routes.find((r: { path: string }) => r.path === "/v1/search");
    assert.deepEqual(search.methods, ["GET", "POST"]);
    assert.ok(result.schemas.length >= 5);
    for (const link of result.schemas) {
      assert.equal((await app.request(link)).status, 200, link);
    }
    for (const doc of result.docs) assert.ok(existsSync(new URL(doc, root)), doc);
  });

  it("each listed route answers with the methods it lists (405 with that Allow otherwise)", async () => {
    const { body } = await get("/");
    for (const route of body.result.routes as Array<{ path: string; methods: string[] }>) {
      const path = route.path.replace("{name}", "envelope");
      const res = await app.request(path, { method: "DELETE" });
      assert.equal(res.status, 405, path);
      assert.equal(res.headers.get("allow"), route.methods.join(", "), path);
    }
  });

  it("other methods on / are 405 with Allow: GET, HEAD and command index; HEAD is 200 with no body", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await app.request("/", { method });
      const body = assertEnvelope(await res.json());
      assert.deepEqual([res.status, body.code, body.command], [405, "method_not_allowed", "index"]);
      assert.equal(res.headers.get("allow"), "GET, HEAD");
    }
    const head = await app.request("/", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });
});

describe("did you mean: a mistyped request field names the one meant", () => {
  const viaGet = async (query: string) => (await get(`/v1/search?${query}`)).body;
  const viaPost = async (body: string) => {
    const res = await app.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return assertEnvelope(await res.json());
  };

  it("GET query → q, POST q → query", async () => {
    const byGet = await viaGet("query=deadline");
    assert.equal(byGet.code, "unknown_field");
    assert.match(byGet.error.message, /^unknown query parameter "query" \(did you mean "q"\?/);
    const byPost = await viaPost('{"q":"deadline"}');
    assert.equal(byPost.code, "unknown_field");
    assert.match(byPost.error.message, /^unknown field "q" \(did you mean "query"\?/);
  });

  it("provider and the CLI's --provider → providers, in both forms; timeout → timeout_ms; LIMIT → limit", async () => {
    const slips: Array<[string, string]> = [
      ["provider", "providers"],
      ["--provider", "providers"],
      ["timeout", "timeout_ms"],
      ["LIMIT", "limit"],
    ];
    for (const [name, meant] of slips) {
      const hint = `(did you mean "${meant}"?)`;
      const byGet = await viaGet(`q=x&${encodeURIComponent(name)}=1`);
      assert.ok(byGet.error.message.includes(hint), `GET ${name}: ${byGet.error.message}`);
      const byPost = await viaPost(JSON.stringify({ query: "x", [name]: 1 }));
      assert.ok(byPost.error.message.includes(hint), `POST ${name}: ${byPost.error.message}`);
      assert.deepEqual([byGet.code, byPost.code], ["unknown_field", "unknown_field"]);
    }
  });

  it("a name close to nothing gets no guess; the field stays refused either way (no aliases)", async () => {
    const byGet = await viaGet("q=x&colour=red");
    assert.ok(!byGet.error.message.includes("did you mean"), byGet.error.message);
    assert.equal(nearestName("constructor", ["query", "scope", "providers"]), null);
    assert.equal(nearestName("x".repeat(100_000), ["query"]), null);
    assert.equal(nearestName("timeoutSeconds", ["timeout_seconds", "weight"]), "timeout_seconds");
  });
});

describe("unknown_scope and unknown_provider list what this caller may use, never a hidden provider", () => {
  const SECRET = "s".repeat(32);
  let servers: TestServer[] = [];
  let gated: ReturnType<typeof createGateway>;

  before(async () => {
    servers = [
      await startServer(answer("open", "open", [])),
      await startServer(answer("vault", "vault", [])),
    ];
    gated = createGateway(settingsFor(
      manifestOf([
        { name: "open", endpoint: servers[0]!.url },
        {
          name: "vault",
          scope: "secrets",
          endpoint: servers[1]!.url,
          sensitivity: "account-visible",
          auth: { type: "gateway-token" },
        },
      ]),
      {
        TRACEFETCH_AUTH_SECRET: SECRET,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      { allowLoopback: true },
    ));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  const token = () =>
    new SignJWT({ scope: "tracefetch:secrets" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject("alice")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(SECRET));

  async function refusal(query: string, bearer?: string) {
    const res = await gated.request(`/v1/search?${query}`, {
      headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
    });
    const body = assertEnvelope(await res.json());
    assert.equal(res.status, 400);
    return body;
  }

  it("anonymous: the providers and scopes listed are the public ones; the gated provider and its scope are never named", async () => {
    const provider = await refusal("q=x&providers=vaul");
    assert.equal(provider.code, "unknown_provider");
    assert.equal(
      provider.error.message,
      'there is no provider "vaul"; the providers you may use: open',
    );
    const scope = await refusal("q=x&scope=secret");
    assert.equal(scope.code, "unknown_scope");
    assert.equal(
      scope.error.message,
      'there is no scope "secret"; the scopes you may use: auto, public and open',
    );
  });

  it("with a token granting the scope: the gated provider and its scope are listed, and guessed", async () => {
    const bearer = await token();
    const provider = await refusal("q=x&providers=vaul", bearer);
    assert.equal(
      provider.error.message,
      'there is no provider "vaul" (did you mean "vault"?); the providers you may use: open and vault',
    );
    const scope = await refusal("q=x&scope=secret", bearer);
    assert.equal(
      scope.error.message,
      'there is no scope "secret" (did you mean "secrets"?); the scopes you may use: auto, public, open and secrets',
    );
  });
});

describe("a manifest with no providers", () => {
  it("warns once when the gateway is built, and every search says the manifest is empty, not the caller's scope", async () => {
    const warnings: string[] = [];
    const empty = createGateway(
      settingsFor({ schema_version: "tracefetch.providers.v1", providers: [] }),
      { onWarning: (line) => warnings.push(line) },
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? "", /^the manifest declares no providers/);
    for (const query of ["q=x", "q=x&scope=anything", "q=x&providers=a"]) {
      const res = await empty.request(`/v1/search?${query}`);
      const body = assertEnvelope(await res.json());
      assert.deepEqual([res.status, body.code], [400, "no_providers_selected"], query);
      assert.match(body.error.message, /manifest declares no providers/);
      assert.equal(body.error.field, undefined, "the caller's fields are not at fault");
    }
  });

  it("a manifest with providers gives no warning", () => {
    const warnings: string[] = [];
    createGateway(
      settingsFor(manifestOf([{ name: "open", endpoint: "https://open.example/search" }])),
      { onWarning: (line) => warnings.push(line) },
    );
    assert.deepEqual(warnings, []);
  });
});

describe("a merged entry's locator: as sent, with only the host lowercased and a default port removed", () => {
  it("shows the best-ranked appearance tidied, while each attempt keeps its candidates as sent", async () => {
    const sent = "https://Developer.MOZILLA.org:443/en-US/Docs/Web?Q=A%20b#Part";
    const a = await startServer(answer("a", "a", [{ title: "MDN", locator: sent }]));
    const b = await startServer(
      answer("b", "b", [
        { title: "other", locator: "https://example.org/" },
        { title: "MDN again", locator: "https://developer.mozilla.org/en-US/Docs/Web?Q=A%20b" },
      ]),
    );
    try {
      const two = gateway([{ name: "a", endpoint: a.url }, { name: "b", endpoint: b.url }]);
      const res = await two.request("/v1/search?q=mdn");
      const body = assertEnvelope(await res.json());
      const mdn = body.result.merged.find((e: { title: string }) => e.title === "MDN");
      assert.equal(mdn.locator, "https://developer.mozilla.org/en-US/Docs/Web?Q=A%20b#Part");
      assert.deepEqual(mdn.found_by, ["a", "b"]);
      assert.equal(body.result.candidates[0].candidates[0].locator, sent);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps scheme, user information, path, query and fragment; removes only 80 on http: and 443 on https:", () => {
    const cases: Array<[string, string]> = [
      ["https://Example.COM:443/A/b?C=D#E", "https://example.com/A/b?C=D#E"],
      ["HTTP://Example.com:80/Path", "HTTP://example.com/Path"],
      ["http://example.com:443/", "http://example.com:443/"],
      ["https://example.com:80/", "https://example.com:80/"],
      ["https://example.com:8443/x", "https://example.com:8443/x"],
      ["https://User:PW@Example.com:443/x", "https://User:PW@example.com/x"],
      ["https://[2001:DB8::1]:443/x", "https://[2001:db8::1]/x"],
      ["https://[2001:DB8::1]:8443/x", "https://[2001:db8::1]:8443/x"],
      ["https://EXAMPLE.com", "https://example.com"],
      ["https://example.com:/x", "https://example.com/x"],
      ["https://www.Example.com/%7Euser/", "https://www.example.com/%7Euser/"],
      ["doc:Notes/Deadline.md", "doc:Notes/Deadline.md"],
      ["ftp://Example.com:21/x", "ftp://Example.com:21/x"],
      ["https://exa mple.com:443/x", "https://exa mple.com:443/x"],
    ];
    for (const [locator, shown] of cases) {
      assert.equal(shownLocator(locator), shown, locator);
      assert.equal(dedupKey(shown), dedupKey(locator), `the dedup key of ${locator} is unchanged`);
    }
  });
});
