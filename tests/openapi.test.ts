/**
 * The OpenAPI document and the API reference: schemas/openapi.json is valid OpenAPI 3.1 and names
 * every route and method the app answers; /openapi.json serves it byte for byte; real answers and
 * streams validate against it; /docs is a page whose scripts all come from this gateway, under a
 * policy that lets it reach no other origin.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { validate } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import * as v from "valibot";
import { ROUTES } from "../src/http/route-table.ts";
import { ExpandAskSchema, RefreshAskSchema } from "../src/protocol/action-request-schema.ts";
import { parseExpandRequestText, parseRefreshRequestText } from "../src/protocol/action-request.ts";
import { launch } from "../src/runtime/launch.ts";
import { VIEWER_PACKAGE, viewerFile } from "../src/runtime/api-docs-viewer.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";
import { readSettings } from "../src/config/settings.ts";

const TEXT = readFileSync(new URL("../schemas/openapi.json", import.meta.url), "utf8");
// deno-lint-ignore no-explicit-any
const DOC: any = JSON.parse(TEXT);
const VIEWER = "globalThis.Scalar = { createApiReference() {} };\n";
const withViewer = { ports: { apiDocs: () => Promise.resolve(VIEWER) } };

/** The document's path for a route as the router matches it (`/schemas/:file`). */
function documentPath(pattern: string): string {
  return ROUTES.find((r) => r.pattern === pattern)?.path ?? pattern.replace(/:(\w+)/g, "{$1}");
}

/** A path that reaches the route, its parameters filled in. */
const CONCRETE: Record<string, string> = {
  "/schemas/:file": "/schemas/envelope.json",
  "/page/:file": "/page/app.js",
};
const concrete = (pattern: string) => CONCRETE[pattern] ?? pattern.replace(/:\w+/g, "x");

describe("schemas/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document (@readme/openapi-parser)", async () => {
    assert.match(DOC.openapi, /^3\.1\./);
    const result = await validate(structuredClone(DOC));
    assert.deepEqual(result.valid ? [] : result.errors, []);
    assert.equal(result.valid, true);
  });

  it("names every route and method the app answers, HEAD wherever the app allows it", async () => {
    const app = gateway([], withViewer);
    const concreteRoutes = app.routes.filter((r) => r.method !== "ALL");
    assert.ok(concreteRoutes.length >= ROUTES.length, "the app lists its routes");
    for (const { path, method } of concreteRoutes) {
      const item = DOC.paths[documentPath(path)];
      assert.ok(item, `${path} is not in the document`);
      assert.ok(item[method.toLowerCase()], `${method} ${path} is not in the document`);
      if (method !== "GET") continue;
      const head = await app.request(concrete(path), { method: "HEAD" });
      assert.equal(
        item.head !== undefined,
        head.status !== 405,
        `HEAD ${path} answers ${head.status}; the document ${item.head ? "has" : "lacks"} it`,
      );
    }
    // Hono's catch-alls (method ALL): the middleware's `/*`, and each route's 405 for the rest.
    for (const { path } of app.routes.filter((r) => r.method === "ALL" && !r.path.includes("*"))) {
      assert.ok(DOC.paths[documentPath(path)], `${path} answers, and is not in the document`);
    }
  });

  it("gives each refusal the status the code table gives its code", () => {
    const search = DOC.paths["/v1/search"].post.responses;
    assert.match(search["400"].description, /`query_empty`/);
    assert.match(search["413"].description, /`body_too_large`/);
    assert.match(search["429"].description, /`overloaded`/);
    assert.match(search["503"].description, /`all_providers_failed`/);
    assert.match(DOC.paths["/v1/expand"].post.responses["410"].description, /`locator_expired`/);
    assert.match(DOC.paths["/v1/refresh"].post.responses["403"].description, /`forbidden`/);
  });
});

describe("answers validate against the document", () => {
  let provider: TestServer;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...DOC, $id: "https://tracefetch.test/openapi.json" });
  const schema = (pointer: string) => {
    const check = ajv.getSchema(`https://tracefetch.test/openapi.json#${pointer}`);
    assert.ok(check, pointer);
    return (value: unknown) => assert.ok(check(value), JSON.stringify(check.errors));
  };
  const okSearch = "/paths/~1v1~1search/get/responses/200/content/application~1json/schema";

  before(async () => {
    provider = await startServer(answer("notes", "notes", [{ title: "t", locator: "https://a/" }]));
  });
  after(() => provider.close());

  it("a search's envelope, a refusal's and every streamed event", async () => {
    const app = gateway([{ name: "notes", endpoint: provider.url }]);
    schema(okSearch)(await (await app.request("/v1/search?q=deadline")).json());
    const refused = await app.request("/v1/search?q=deadline&limit=0");
    assert.equal(refused.status, 400);
    schema("/components/schemas/Envelope")(await refused.json());
    const stream = await app.request("/v1/search?q=deadline&stream=ndjson");
    const events = (await stream.text()).split("\n").filter((line) => line !== "");
    assert.deepEqual(
      events.map((line) => JSON.parse(line).event).filter((e) => e !== "heartbeat"),
      ["plan", "provider", "merged", "done"],
    );
    for (const line of events) schema("/components/schemas/StreamEvent")(JSON.parse(line));
  });

  it("the expand and refresh bodies: the schemas and the routes' parser agree", () => {
    const long = "l".repeat(1_999) + "\u{1F600}";
    const expand: Array<[unknown, boolean]> = [
      [{ provider: "notes", locator: "https://a/" }, true],
      [{ provider: "notes", locator: long }, true],
      [{ provider: "notes", locator: `${long}x` }, false],
      [{ provider: "notes" }, false],
      [{ provider: "notes", locator: "" }, false],
      [{ provider: "notes", locator: null }, false],
      [{ provider: "", locator: "x" }, false],
      [{ provider: "n".repeat(65), locator: "x" }, false],
      [{ provider: "notes", locator: "x", extra: 1 }, false],
      [{ provider: 7, locator: "x" }, false],
    ];
    for (const [body, ok] of expand) {
      assert.equal(parseExpandRequestText(JSON.stringify(body)).ok, ok, JSON.stringify(body));
      assert.equal(v.safeParse(ExpandAskSchema, body).success, ok, JSON.stringify(body));
    }
    const refresh: Array<[unknown, boolean]> = [
      [{ provider: "notes" }, true],
      [{}, false],
      [{ provider: "notes", locator: "x" }, false],
      [{ provider: null }, false],
    ];
    for (const [body, ok] of refresh) {
      assert.equal(parseRefreshRequestText(JSON.stringify(body)).ok, ok, JSON.stringify(body));
      assert.equal(v.safeParse(RefreshAskSchema, body).success, ok, JSON.stringify(body));
    }
  });
});

describe("GET /openapi.json", () => {
  it("answers schemas/openapi.json byte for byte, as JSON, on a gateway with /docs off too", async () => {
    const res = await gateway([]).request("/openapi.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(res.headers.get("cache-control"), "public, max-age=300");
    assert.equal(await res.text(), TEXT);
  });
});

describe("GET /docs", () => {
  const app = gateway([], withViewer);

  it("is an HTML page over /openapi.json whose scripts are all this gateway's", async () => {
    const res = await app.request("/docs");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const html = await res.text();
    const sources = [...html.matchAll(/<script[^>]*\ssrc="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(sources, ["/docs/scalar.js"]);
    assert.doesNotMatch(html, /https?:\/\//, "no URL of another origin, a CDN's least of all");
    assert.match(html, /"url": "\/openapi\.json"/);
  });

  it("is served with a policy that reaches this origin only and runs its one inline script", async () => {
    const res = await app.request("/docs");
    const policy = res.headers.get("content-security-policy") ?? "";
    const html = await res.text();
    const directives = new Map(
      policy.split(/;\s*/).map((d) => {
        const [name, ...values] = d.split(" ");
        return [name, values];
      }),
    );
    assert.deepEqual(directives.get("default-src"), ["'self'"]);
    assert.deepEqual(directives.get("connect-src"), ["'self'"]);
    assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
    assert.doesNotMatch(policy, /https?:|\*/, "no other origin is named");
    const inline = [...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)];
    assert.equal(inline.length, 1);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(inline[0]?.[1]));
    const hash = `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`;
    assert.deepEqual(directives.get("script-src"), ["'self'", hash]);
  });

  it("names the gateway's icon, which is served, so no browser asks for /favicon.ico", async () => {
    const html = await (await app.request("/docs")).text();
    const icons = [...html.matchAll(/<link rel="icon" href="([^"]+)" type="image\/svg\+xml"/g)];
    assert.deepEqual(icons.map((m) => m[1]), ["/page/icon.svg"]);
    const icon = await app.request("/page/icon.svg");
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get("content-type"), "image/svg+xml");
    assert.match(await icon.text(), /^<svg /);
  });

  it("/docs/scalar.js serves the viewer script as JavaScript", async () => {
    const res = await app.request("/docs/scalar.js");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(await res.text(), VIEWER);
  });

  it("needs no token, even where every route of the API needs one", async () => {
    const locked = gateway([], {
      ...withViewer,
      env: {
        TRACEFETCH_AUTH_SECRET: "s".repeat(32),
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
        TRACEFETCH_REQUIRE_AUTH: "on",
      },
    });
    assert.equal((await locked.request("/v1/providers")).status, 401, "the API is locked");
    for (const path of ["/openapi.json", "/docs", "/docs/scalar.js"]) {
      assert.equal((await locked.request(path)).status, 200, path);
    }
  });

  it("off, both answer a 404 envelope saying how to turn it on", async () => {
    for (const path of ["/docs", "/docs/scalar.js"]) {
      const res = await gateway([]).request(path);
      assert.equal(res.status, 404, path);
      const body = assertEnvelope(await res.json());
      assert.equal(body.code, "not_found");
      assert.match(body.error.message, /TRACEFETCH_API_DOCS=1/);
    }
  });

  it("on without the viewer installed, both answer a 404 envelope naming its package", async () => {
    const app = gateway([], { ports: { apiDocs: () => Promise.resolve(null) } });
    for (const path of ["/docs", "/docs/scalar.js"]) {
      const body = assertEnvelope(await (await app.request(path)).json());
      assert.equal(body.code, "not_found", path);
      assert.match(body.error.message, new RegExp(VIEWER_PACKAGE));
    }
  });
});

describe("/docs as npm start and deno task dev serve it", () => {
  /** The app launch() would serve, asked in process. */
  const started = async (env: Record<string, string>) => {
    let app: ((request: Request) => Response | Promise<Response>) | null = null;
    const running = await launch(
      readSettings({
        TRACEFETCH_MANIFEST: '{"schema_version":"tracefetch.providers.v1","providers":[]}',
        ...env,
      }),
      (fetch) => {
        app = fetch;
        return Promise.resolve({ port: 0, close: () => Promise.resolve() });
      },
    );
    await running.close();
    assert.ok(app);
    const serve: (request: Request) => Response | Promise<Response> = app;
    return (path: string) => serve(new Request(`http://gateway.test${path}`));
  };

  it("is on by default and serves the installed viewer (or, without it, a 404 naming it)", async () => {
    const ask = await started({});
    const res = await ask("/docs/scalar.js");
    const file = viewerFile();
    if (file === null) {
      assert.equal(res.status, 404);
      assert.match(assertEnvelope(await res.json()).error.message, new RegExp(VIEWER_PACKAGE));
    } else {
      assert.equal(res.status, 200);
      assert.equal(await res.text(), await readFile(file, "utf8"));
    }
  });

  it("TRACEFETCH_API_DOCS=0 turns it off", async () => {
    const ask = await started({ TRACEFETCH_API_DOCS: "0" });
    const body = assertEnvelope(await (await ask("/docs")).json());
    assert.match(body.error.message, /is off on this gateway/);
  });
});
