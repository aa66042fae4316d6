import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./support/auth-keys.ts";

describe("the JWKS: fetched with a cap, cached, refetched at most once per cooldown", () => {
  let ed: KeyPair, signing: KeyPair;
  let jwks: TestServer, open: TestServer, secret: TestServer;
  before(async () => {
    ed = await keyPair("EdDSA", "ed-1");
    signing = await keyPair("EdDSA", "gw");
    jwks = await startServer(raw(200, JSON.stringify({ keys: [ed.publicJwk] })));
    open = await startServer(
      answer("open", "open", [{ title: "Open", locator: "https://open.example/" }]),
    );
    secret = await startServer(
      answer("private", "private", [{ title: "P", locator: "https://p.example/" }]),
    );
  });
  after(async () => {
    for (const s of [jwks, open, secret]) await s.close();
  });

  const gatewayWith = (jwksUrl: string, extra: Record<string, string> = {}) =>
    createGateway(settingsFor(
      manifestOf([
        { name: "open", endpoint: open.url },
        { name: "private", endpoint: secret.url, sensitivity: "account-visible" },
      ]),
      {
        TRACEFETCH_AUTH_JWKS_URL: jwksUrl,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
        ...extra,
      },
      { allowLoopback: true },
    ));

  it("1,000 tokens with random unknown kids fetch the JWKS once, not once per token", async () => {
    const app = gatewayWith(jwks.url);
    const before = jwks.requests.length;
    const tokens = await Promise.all(
      Array.from({ length: 1000 }, () => sign(ed, {}, { kid: crypto.randomUUID() })),
    );
    for (let i = 0; i < tokens.length; i += 50) {
      const batch = await Promise.all(
        tokens.slice(i, i + 50).map((t) =>
          app.request("/v1/search?q=x", { headers: { authorization: `Bearer ${t}` } })
        ),
      );
      for (const res of batch) assert.equal(res.status, 401);
    }
    assert.equal(jwks.requests.length - before, 1, "one fetch, then the cooldown holds");
  });

  it("a JWKS that cannot be fetched fails closed with 503 auth_unavailable only for token requests", async () => {
    const down = await startServer(raw(500, "down"));
    try {
      const app = gatewayWith(down.url);
      const token = await sign(ed);
      const before = secret.requests.length;
      const refused = await app.request("/v1/search?q=x&providers=private", {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(refused.status, 503);
      const body = assertEnvelope(await refused.json());
      assert.deepEqual([body.code, body.action, body.retryable], [
        "auth_unavailable",
        "retry",
        true,
      ]);
      assert.equal(secret.requests.length, before);
      const anonymous = await app.request("/v1/search?q=x");
      assert.equal(anonymous.status, 200, "anonymous searches of public providers carry on");
      assert.equal(assertEnvelope(await anonymous.json()).code, "ok");
    } finally {
      await down.close();
    }
  });

  it("a JWKS over 64 KiB is refused as unavailable keys", async () => {
    const huge = await startServer(
      raw(200, JSON.stringify({ keys: [ed.publicJwk], pad: "x".repeat(70_000) })),
    );
    try {
      const res = await gatewayWith(huge.url).request("/v1/search?q=x", {
        headers: { authorization: `Bearer ${await sign(ed)}` },
      });
      assert.equal(res.status, 503);
      assert.equal(assertEnvelope(await res.json()).code, "auth_unavailable");
    } finally {
      await huge.close();
    }
  });

  it("TRACEFETCH_REQUIRE_AUTH=1 requires a token everywhere but status and the JWKS", async () => {
    const app = gatewayWith(jwks.url, { TRACEFETCH_REQUIRE_AUTH: "1" });
    for (const path of ["/v1/search?q=x", "/v1/providers", "/schemas/envelope.json"]) {
      const res = await app.request(path);
      assert.equal(res.status, 401, path);
      assert.equal(assertEnvelope(await res.json()).action, "login");
    }
    assert.equal((await app.request("/v1/status")).status, 200);
    assert.equal((await app.request("/.well-known/jwks.json")).status, 200);
    const ok = await app.request("/v1/search?q=x", {
      headers: { authorization: `Bearer ${await sign(ed)}` },
    });
    assert.equal(ok.status, 200);
  });
});

describe("a half-configured setup is refused at start", () => {
  const manifest = manifestOf([{ name: "open", endpoint: "https://open.example/s" }]);
  const refuses = (env: Record<string, string>, message: RegExp) =>
    assert.throws(
      () => createGateway(settingsFor(manifest, env)),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );

  it("an issuer without keys", () => refuses({ TRACEFETCH_AUTH_ISSUER: ISSUER }, /no key source/));
  it("keys without issuer and audience", () =>
    refuses(
      { TRACEFETCH_AUTH_SECRET: "s".repeat(40) },
      /TRACEFETCH_AUTH_ISSUER and TRACEFETCH_AUTH_AUDIENCE/,
    ));
  it("an HS256 secret under 32 bytes", () =>
    refuses({
      TRACEFETCH_AUTH_SECRET: "short",
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
    }, /at least 32 bytes/));
  it("require-auth without keys", () => refuses({ TRACEFETCH_REQUIRE_AUTH: "1" }, /no key source/));
  it("a signing key without TRACEFETCH_GATEWAY_ISSUER: provider tokens never take a request's Host as iss", async () => {
    const ed = await keyPair("EdDSA", "e");
    refuses(
      { TRACEFETCH_SIGNING_JWK: JSON.stringify(ed.privateJwk) },
      /^TRACEFETCH_SIGNING_JWK is set but TRACEFETCH_GATEWAY_ISSUER is not/,
    );
  });
  it("a signing key that does not parse", () =>
    refuses(
      { TRACEFETCH_SIGNING_JWK: "{not json", TRACEFETCH_GATEWAY_ISSUER: ISSUER },
      /not JSON/,
    ));
  it("a signing key that is not Ed25519", async () => {
    const rsa = await keyPair("RS256", "r");
    refuses({
      TRACEFETCH_SIGNING_JWK: JSON.stringify(rsa.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: ISSUER,
    }, /Ed25519/);
  });
  it("a signing key without its private half", async () => {
    const ed = await keyPair("EdDSA", "e");
    refuses({
      TRACEFETCH_SIGNING_JWK: JSON.stringify(ed.publicJwk),
      TRACEFETCH_GATEWAY_ISSUER: ISSUER,
    }, /private half/);
  });
  it("a static JWKS holding a private key", async () => {
    const ed = await keyPair("EdDSA", "e");
    refuses(
      {
        TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [ed.privateJwk] }),
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      /public keys only/,
    );
  });
  it("a JWKS URL over plain http to a remote host", () =>
    refuses({
      TRACEFETCH_AUTH_JWKS_URL: "http://idp.example/jwks",
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
    }, /https/));
});

describe("HS256 for development", () => {
  it("accepts an HS256 token signed with the configured secret, and refuses RS256 then", async () => {
    const secretText = "a-development-secret-of-at-least-32-bytes";
    const app = createGateway(settingsFor(
      manifestOf([{
        name: "open",
        endpoint: "https://open.example/s",
        timeout_seconds: 0,
      }]),
      {
        TRACEFETCH_AUTH_SECRET: secretText,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
    ));
    const { SignJWT } = await import("jose");
    const token = await new SignJWT({ scope: "tracefetch:*" }).setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE).setExpirationTime("1m").sign(new TextEncoder().encode(secretText));
    assert.equal(
      (await app.request("/v1/providers", { headers: { authorization: `Bearer ${token}` } }))
        .status,
      200,
    );
    const rsa = await keyPair("RS256", "r");
    assert.equal(
      (await app.request("/v1/providers", {
        headers: { authorization: `Bearer ${await sign(rsa)}` },
      })).status,
      401,
    );
  });
});
