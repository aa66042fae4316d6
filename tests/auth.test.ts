import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import {
  AUDIENCE,
  b64url,
  forge,
  hmac,
  ISSUER,
  type KeyPair,
  keyPair,
  sign,
} from "./support/auth-keys.ts";

describe("caller tokens: every bad token is refused and the sensitive provider is never reached", () => {
  let rsa: KeyPair, rsa384: KeyPair, ec: KeyPair, ed: KeyPair, signing: KeyPair, stranger: KeyPair;
  let jwks: TestServer, secret: TestServer, open: TestServer;
  let app: ReturnType<typeof createGateway>;

  before(async () => {
    [rsa, rsa384, ec, ed, signing, stranger] = await Promise.all([
      keyPair("RS256", "rsa-1"),
      keyPair("RS384", "rsa-1"),
      keyPair("ES256", "ec-1"),
      keyPair("EdDSA", "ed-1"),
      keyPair("EdDSA", "gateway-1"),
      keyPair("EdDSA", "ed-1"),
    ]);
    jwks = await startServer(
      raw(200, JSON.stringify({ keys: [rsa.publicJwk, ec.publicJwk, ed.publicJwk] })),
    );
    secret = await startServer(
      answer("private", "private", [{ title: "Private page", locator: "https://intra.example/1" }]),
    );
    open = await startServer(
      answer("open", "open", [{ title: "Open page", locator: "https://open.example/1" }]),
    );
    app = createGateway(settingsFor(
      manifestOf([
        { name: "open", endpoint: open.url },
        {
          name: "private",
          endpoint: secret.url,
          sensitivity: "account-visible",
          auth: { type: "gateway-token" },
        },
      ]),
      {
        TRACEFETCH_AUTH_JWKS_URL: jwks.url,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      },
      { describeProviders: false, allowLoopback: true },
    ));
  });
  after(async () => {
    for (const s of [jwks, secret, open]) await s.close();
  });

  const now = () => Math.floor(Date.now() / 1000);
  const searchPrivate = async (token: string | null) => {
    const res = await app.request("/v1/search?q=x&providers=private", {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    return { res, body: assertEnvelope(await res.json()) };
  };

  const cases: Array<[string, () => Promise<string | null>, number, string, string]> = [
    ["no token", () => Promise.resolve(null), 401, "unauthorized", "login"],
    [
      "alg none",
      () =>
        Promise.resolve(
          forge({ alg: "none" }, {
            iss: ISSUER,
            aud: AUDIENCE,
            exp: now() + 60,
            scope: "tracefetch:*",
          }),
        ),
      401,
      "token_invalid",
      "login",
    ],
    [
      "HS256 signed with the RSA public key as the secret",
      async () => {
        const header = b64url(JSON.stringify({ alg: "HS256", kid: "rsa-1" }));
        const payload = b64url(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: now() + 60, scope: "tracefetch:*" }),
        );
        const mac = await hmac(
          new TextEncoder().encode(JSON.stringify(rsa.publicJwk)),
          `${header}.${payload}`,
        );
        return `${header}.${payload}.${b64url(mac)}`;
      },
      401,
      "token_invalid",
      "login",
    ],
    [
      "HS256 signed with the EC public key's x as the secret",
      async () => {
        const header = b64url(JSON.stringify({ alg: "HS256", kid: "ec-1" }));
        const payload = b64url(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: now() + 60, scope: "tracefetch:*" }),
        );
        const mac = await hmac(
          new TextEncoder().encode(String(ec.publicJwk.x)),
          `${header}.${payload}`,
        );
        return `${header}.${payload}.${b64url(mac)}`;
      },
      401,
      "token_invalid",
      "login",
    ],
    [
      "an algorithm off the list (RS384)",
      () => sign(rsa384, {}, { kid: "rsa-1" }, "RS384"),
      401,
      "token_invalid",
      "login",
    ],
    [
      "an embedded jwk header",
      () => sign(stranger, {}, { jwk: stranger.publicJwk }),
      401,
      "token_invalid",
      "login",
    ],
    [
      "a jku header",
      () => sign(ed, {}, { jku: "https://attacker.example/jwks.json" }),
      401,
      "token_invalid",
      "login",
    ],
    ["expired", () => sign(ed, { exp: now() - 120 }), 401, "token_expired", "login"],
    ["nbf in the future", () => sign(ed, { nbf: now() + 600 }), 401, "token_invalid", "login"],
    ["no exp", () => sign(ed, { exp: undefined }), 401, "token_invalid", "login"],
    ["wrong iss", () => sign(ed, { iss: "https://evil.example" }), 401, "token_invalid", "login"],
    ["wrong aud", () => sign(ed, { aud: "someone-else" }), 401, "token_invalid", "login"],
    [
      "aud as an array without ours",
      () => sign(ed, { aud: ["a", "b"] }),
      401,
      "token_invalid",
      "login",
    ],
    [
      "a tampered payload",
      async () => {
        const [h, , s] = (await sign(ed, { scope: "tracefetch:open" })).split(".");
        return `${h}.${
          b64url(
            JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: now() + 60, scope: "tracefetch:*" }),
          )
        }.${s}`;
      },
      401,
      "token_invalid",
      "login",
    ],
    [
      "a truncated token",
      async () => (await sign(ed)).slice(0, -10),
      401,
      "token_invalid",
      "login",
    ],
    [
      "a token of 10,000 dots",
      () => Promise.resolve(".".repeat(10_000)),
      401,
      "token_invalid",
      "login",
    ],
    [
      "a token over 8 KiB",
      () => sign(ed, { padding: "x".repeat(9_000) }),
      401,
      "token_invalid",
      "login",
    ],
    [
      "an ES256 signature of zeros",
      async () => {
        const [h, p] = (await sign(ec)).split(".");
        return `${h}.${p}.${b64url(new Uint8Array(64))}`;
      },
      401,
      "token_invalid",
      "login",
    ],
    ["an unknown kid", () => sign(stranger, {}, { kid: "nobody" }), 401, "token_invalid", "login"],
    [
      "a valid token without the provider's scope",
      () => sign(ed, { scope: "tracefetch:open" }),
      403,
      "insufficient_scope",
      "check_access",
    ],
  ];

  for (const [name, token, status, code, action] of cases) {
    it(`${name}: ${status} ${code}, action ${action}, nothing sent`, async () => {
      const before = secret.requests.length;
      const { res, body } = await searchPrivate(await token());
      assert.equal(res.status, status);
      assert.deepEqual([body.code, body.action, body.ok], [code, action, false]);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="tracefetch"/);
      assert.equal(secret.requests.length, before, "the sensitive provider received no request");
    });
  }

  it("a token failing verification on a public search is refused, never downgraded to anonymous", async () => {
    const res = await app.request("/v1/search?q=x", {
      headers: { authorization: `Bearer ${await sign(ed, { exp: now() - 120 })}` },
    });
    assert.equal(res.status, 401);
    assert.equal(assertEnvelope(await res.json()).code, "token_expired");
  });

  it("an entitled token reaches the sensitive provider with a minted token, never its own", async () => {
    for (const key of [rsa, ec, ed]) {
      const token = await sign(key);
      const before = secret.requests.length;
      const { res, body } = await searchPrivate(token);
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.result.merged[0].sensitivity, "account-visible");
      const seen = secret.requests.slice(before);
      assert.equal(seen.length, 1);
      const sent = String(seen[0]!.headers.authorization);
      assert.notEqual(sent, `Bearer ${token}`);
      assert.ok(
        !JSON.stringify(seen[0]!.headers).includes(token),
        "the caller's token never goes upstream",
      );
      const payload = JSON.parse(Buffer.from(sent.split(".")[1]!, "base64url").toString());
      assert.equal(payload.aud, "private");
      assert.equal(payload.sub, "alice");
      assert.equal(payload.scope, "tracefetch:private");
    }
  });

  it("sensitive providers are invisible to anonymous callers and visible to entitled ones", async () => {
    const anon = assertEnvelope(await (await app.request("/v1/providers")).json());
    assert.deepEqual(anon.result.providers.map((p: { name: string }) => p.name), ["open"]);
    const status = assertEnvelope(await (await app.request("/v1/status")).json());
    assert.deepEqual(status.result.providers.map((p: { name: string }) => p.name), ["open"]);
    const auto = assertEnvelope(await (await app.request("/v1/search?q=x")).json());
    assert.deepEqual(auto.result.decision.providers, ["open"]);
    assert.ok(!JSON.stringify(auto).includes("private"), "not planned, skipped or trimmed: absent");
    const headers = { authorization: `Bearer ${await sign(ed)}` };
    const entitled = assertEnvelope(await (await app.request("/v1/providers", { headers })).json());
    assert.deepEqual(entitled.result.providers.map((p: { name: string }) => p.name), [
      "open",
      "private",
    ]);
    const unscoped = { authorization: `Bearer ${await sign(ed, { scope: "tracefetch:open" })}` };
    const other = assertEnvelope(
      await (await app.request("/v1/providers", { headers: unscoped })).json(),
    );
    assert.deepEqual(other.result.providers.map((p: { name: string }) => p.name), ["open"]);
  });

  it("the wildcard scope grants every sensitive provider", async () => {
    const { res } = await searchPrivate(await sign(ed, { scope: "tracefetch:* other:thing" }));
    assert.equal(res.status, 200);
  });

  it("publishes the signing key's public half, and nothing private", async () => {
    const res = await app.request("/.well-known/jwks.json");
    assert.equal(res.status, 200);
    const set = await res.json();
    assert.equal(set.keys.length, 1);
    assert.equal(set.keys[0].kid, "gateway-1");
    assert.equal(set.keys[0].d, undefined);
    assert.equal(set.keys[0].x, signing.publicJwk.x);
  });
});
