import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { createGateway } from "../src/http/mod.ts";
import { verifyGatewayToken } from "../src/auth/mod.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./support/auth-keys.ts";

describe("tokens minted for providers", () => {
  let signing: KeyPair, caller: KeyPair;
  let provider: TestServer, internal: TestServer, open: TestServer;
  let app: ReturnType<typeof createGateway>;

  before(async () => {
    [signing, caller] = await Promise.all([keyPair("EdDSA", "gw-1"), keyPair("EdDSA", "idp-1")]);
    provider = await startServer(
      answer("minted", "minted", [{ title: "M", locator: "https://m.example/" }]),
    );
    internal = await startServer(
      answer("vault", "vault", [{ title: "V", locator: "https://v.example/" }]),
    );
    open = await startServer(
      answer("open", "open", [{ title: "O", locator: "https://v.example/" }]),
    );
    app = createGateway(settingsFor(
      manifestOf([
        { name: "open", endpoint: open.url },
        {
          name: "minted",
          endpoint: provider.url,
          auth: { type: "gateway-token" },
          timeout_seconds: 7,
        },
        { name: "vault", endpoint: internal.url, sensitivity: "internal", isolated: true },
      ]),
      {
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "http://gateway.test",
        TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [caller.publicJwk] }),
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      { describeProviders: false, allowLoopback: true },
    ));
  });
  after(async () => {
    for (const s of [provider, internal, open]) await s.close();
  });

  it("each attempt gets a fresh token: one audience, iss the gateway, sub anonymous, a jti unique across 1,000 attempts", async () => {
    const before = provider.requests.length;
    for (let i = 0; i < 1000; i += 50) {
      // A different query each: identical searches in flight would share one attempt.
      const batch = await Promise.all(
        Array.from(
          { length: 50 },
          (_, k) => app.request(`http://gateway.test/v1/search?q=x${i + k}&providers=minted`),
        ),
      );
      for (const res of batch) assert.equal(res.status, 200);
    }
    const seen = provider.requests.slice(before);
    assert.equal(seen.length, 1000);
    const jtis = new Set<string>();
    for (const request of seen) {
      const token = String(request.headers.authorization).replace(/^Bearer /, "");
      const header = decodeProtectedHeader(token);
      const claims = decodeJwt(token);
      assert.deepEqual([header.alg, header.kid], ["EdDSA", "gw-1"]);
      assert.equal(claims.aud, "minted", "exactly one audience, as a string");
      assert.equal(claims.iss, "http://gateway.test");
      assert.equal(claims.sub, "anonymous");
      assert.equal(claims.scope, "tracefetch:minted");
      // Expires just past the attempt's budget (7 s here) plus a few seconds of slack.
      assert.ok(
        claims.exp! - claims.iat! >= 7 && claims.exp! - claims.iat! <= 13,
        `lifetime ${claims.exp! - claims.iat!}`,
      );
      jtis.add(String(claims.jti));
    }
    assert.equal(jtis.size, 1000);
  });

  it("a public provider without gateway-token auth gets no authorization header", async () => {
    const before = open.requests.length;
    await app.request("/v1/search?q=x&providers=open");
    assert.equal(open.requests[before]!.headers.authorization, undefined);
  });

  it("an internal provider runs only alone, for an entitled caller, as candidate-only-internal", async () => {
    const headers = {
      authorization: `Bearer ${await sign(caller, { scope: "tracefetch:vault" })}`,
    };
    const alone = assertEnvelope(
      await (await app.request("/v1/search?q=x&providers=vault", { headers })).json(),
    );
    assert.equal(alone.code, "ok");
    assert.equal(alone.result.merged[0].evidence_state, "candidate-only-internal");
    assert.equal(alone.result.merged[0].sensitivity, "internal");
    const mixed = await app.request("/v1/search?q=x&providers=vault,open", { headers });
    assert.equal(mixed.status, 400);
    assert.equal(assertEnvelope(await mixed.json()).code, "isolation_conflict");
    const auto = assertEnvelope(await (await app.request("/v1/search?q=x", { headers })).json());
    assert.ok(!auto.result.decision.providers.includes("vault"), "never planned by scope auto");
  });

  it("verifyGatewayToken accepts the gateway's tokens and refuses others", async () => {
    const jwks = await (await app.request("/.well-known/jwks.json")).json();
    const verify = verifyGatewayToken({ jwks, issuer: "http://gateway.test", audience: "minted" });
    const before = provider.requests.length;
    await app.request("http://gateway.test/v1/search?q=x&providers=minted");
    const minted = String(provider.requests[before]!.headers.authorization);
    const request = (authorization?: string) =>
      new Request("http://provider.test/search", {
        method: "POST",
        headers: authorization ? { authorization } : {},
      });
    assert.equal(await verify(request(minted)), null);
    const other = verifyGatewayToken({
      jwks,
      issuer: "http://gateway.test",
      audience: "someone-else",
    });
    assert.equal(
      (await other(request(minted)))?.status,
      401,
      "another provider's token is refused",
    );
    const callerToken = `Bearer ${await sign(caller)}`;
    assert.equal(
      (await verify(request(callerToken)))?.status,
      401,
      "a caller's token is not a gateway token",
    );
    assert.equal((await verify(request()))?.status, 401);
  });

  it("a health probe, whose answer every entitled caller sees, asks as the gateway, not as its caller", async () => {
    const before = provider.requests.length;
    const token = `Bearer ${await sign(caller, { sub: "alice", scope: "tracefetch:*" })}`;
    const res = await app.request("http://gateway.test/v1/doctor", {
      headers: { authorization: token },
    });
    assert.equal(res.status, 200);
    const probes = provider.requests.slice(before).filter((r) => r.body.includes("health"));
    assert.equal(probes.length, 1);
    const claims = decodeJwt(String(probes[0]?.headers.authorization).replace(/^Bearer /, ""));
    assert.equal(claims.sub, "tracefetch-gateway");
    assert.equal(claims.aud, "minted");
  });
});
