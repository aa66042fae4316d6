/**
 * One gateway as another's MCP provider with `auth: gateway-token`: A mints a token for its entry
 * (audience the entry's name, scope `tracefetch:<entry scope>`), B verifies it as a caller's token,
 * so B's sensitive provider, which B shows only to a caller granted its scope, reaches A's search.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { readSettings } from "../src/config/settings.ts";
import { gateway, manifestOf, search } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { keyPair } from "./support/auth-keys.ts";
import { runtimeListen } from "./support/runtime-listen.ts";

const A_ISSUER = "https://gateway-a.example";
const mapping = {
  tool: "search",
  arguments: { query: "{query}", limit: "{limit}" },
  results: "result.merged",
  fields: { title: "title", locator: "locator", snippet: "snippet" },
};

describe("gateway A searches gateway B's /mcp with a token it mints", () => {
  let b: Launched;
  let privateProvider: TestServer;
  let aSigning: Awaited<ReturnType<typeof keyPair>>;

  before(async () => {
    const [a, bSigning] = await Promise.all([
      keyPair("EdDSA", "gateway-a"),
      keyPair("EdDSA", "gateway-b"),
    ]);
    aSigning = a;
    privateProvider = await startServer(
      answer("private", "private", [{ title: "Private page", locator: "https://intra.example/1" }]),
    );
    b = await launch(
      readSettings({
        PORT: "0",
        TRACEFETCH_ALLOW_LOOPBACK: "1",
        TRACEFETCH_DESCRIBE_PROVIDERS: "off",
        TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([{
          name: "private",
          scope: "private",
          endpoint: privateProvider.url,
          sensitivity: "account-visible",
          auth: { type: "gateway-token" },
        }])),
        // B trusts A's key as an identity provider's, for the audience A's entry names.
        TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [aSigning.publicJwk] }),
        TRACEFETCH_AUTH_ISSUER: A_ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: "team",
        TRACEFETCH_SIGNING_JWK: JSON.stringify(bSigning.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway-b.example",
      }),
      runtimeListen,
    );
  });
  after(async () => {
    await b?.close();
    await privateProvider?.close();
  });

  const entry = (auth: Record<string, unknown>) => ({
    name: "team",
    scope: "private",
    transport: "mcp",
    endpoint: new URL("/mcp", b.url).href,
    auth,
    mcp: mapping,
  });

  it("with the minted token B's sensitive provider answers; without it, B has nothing to show", async () => {
    const a = gateway([entry({ type: "gateway-token" })], {
      env: {
        TRACEFETCH_SIGNING_JWK: JSON.stringify(aSigning.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: A_ISSUER,
      },
    });
    const { body } = await search(a, { q: "page" });
    assert.equal(body.code, "ok", JSON.stringify(body.result.candidates));
    assert.deepEqual(body.result.merged.map((m: { locator: string }) => m.locator), [
      "https://intra.example/1",
    ]);
    assert.equal(privateProvider.requests.length, 1);
    const anonymous = gateway([entry({ type: "none" })]);
    const without = await search(anonymous, { q: "page" });
    assert.notEqual(without.body.code, "ok");
    assert.equal(privateProvider.requests.length, 1, "B never called its sensitive provider");
  });
});
