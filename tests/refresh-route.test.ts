/**
 * `POST /v1/refresh` (docs/security.md, "Refresh"): an operator asks a provider that owns an index
 * to bring it up to date. Only a caller token granting `tracefetch-admin` may; the answer is the
 * provider's health.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { corpusAdapter, type CorpusDocument } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { keyPair, sign } from "./support/auth-keys.ts";
import { AUDIENCE, ISSUER, type KeyPair } from "./support/auth-keys.ts";

const DOC: CorpusDocument = {
  title: "Deadlines",
  locator: "https://notes.example/deadlines",
  text: "Every call has a deadline.",
  published_at: "2025-03-01",
};

describe("POST /v1/refresh", () => {
  let reloads = 0;
  const adapter = corpusAdapter("notes", "notes", [DOC], {
    reload: () => {
      reloads++;
      return Promise.resolve([DOC]);
    },
  });
  let corpus: { port: number; close: () => Promise<void> };
  let key: KeyPair;
  let app: ReturnType<typeof gateway>;

  before(async () => {
    corpus = await listen(serveProvider(adapter).fetch, "127.0.0.1", 0);
    key = await keyPair("EdDSA", "k1");
    app = gateway(
      [{ name: "notes", scope: "notes", endpoint: `http://127.0.0.1:${corpus.port}/search` }],
      {
        env: {
          TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [key.publicJwk] }),
          TRACEFETCH_AUTH_ISSUER: ISSUER,
          TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
        },
      },
    );
  });
  after(() => corpus.close());

  const refresh = async (token: string | null) => {
    const res = await app.request("/v1/refresh", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({ provider: "notes" }),
    });
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("without a token: 401, login, and the provider is not asked", async () => {
    const before = reloads;
    const { res, body } = await refresh(null);
    assert.equal(res.status, 401);
    assert.equal(body.action, "login");
    assert.equal(reloads, before);
  });

  it("with a token that lacks tracefetch-admin (even tracefetch:*): 403, and nothing is refreshed", async () => {
    const before = reloads;
    const { res, body } = await refresh(await sign(key, { scope: "tracefetch:*" }));
    assert.equal(res.status, 403);
    assert.equal(body.action, "check_access");
    assert.equal(reloads, before);
  });

  it("with tracefetch-admin: the provider reloads and its health is the answer", async () => {
    const before = reloads;
    const { res, body } = await refresh(await sign(key, { scope: "tracefetch-admin" }));
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.command, "refresh");
    assert.equal(body.code, "ok");
    assert.equal(reloads, before + 1);
    assert.equal(JSON.stringify(body.result).includes('"status":"ok"'), true);
  });
});
