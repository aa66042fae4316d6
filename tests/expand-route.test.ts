/**
 * `POST /v1/expand` (docs/envelope.md, "Other routes"): the evidence behind a locator, from the one
 * provider named, over real providers on 127.0.0.1 (the corpus provider through serveProvider).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { corpusAdapter, type CorpusDocument } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { MAX_LOCATOR_CHARS } from "../src/protocol/limits.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { SECRETS } from "./support/fuzz-secrets.ts";
import { raw, startServer, type TestServer } from "./support/servers.ts";

const DOCS: CorpusDocument[] = [
  {
    title: "Deadlines",
    locator: "https://notes.example/deadlines",
    text: "Every call has a deadline.\n\nA deadline that is not propagated is a wish.",
    published_at: "2025-03-01",
  },
  {
    title: "Retries",
    locator: "https://notes.example/retries",
    text: "Retry with jitter, and only what is idempotent.",
    published_at: "2025-06-15",
  },
];

/** A credential an expand's evidence must never hand a caller. */
const EXPAND_SECRET = "S3CR3TEXPAND1";
/** The secret forms planted in a leaky provider's evidence, one per line. */
const LEAKED_TEXT = [`Authorization: Bearer ${EXPAND_SECRET}`, ...SECRETS.map((s) => s.planted)]
  .join("\n");

async function expand(app: ReturnType<typeof gateway>, body: unknown) {
  const res = await app.request("/v1/expand", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { res, body: assertEnvelope(await res.json()) };
}

describe("POST /v1/expand", () => {
  let current: CorpusDocument[] = DOCS;
  const adapter = corpusAdapter("notes", "notes", DOCS, {
    reload: () => Promise.resolve(current),
  });
  let corpus: { port: number; close: () => Promise<void> };
  let bare: TestServer;
  let leaky: TestServer;
  let app: ReturnType<typeof gateway>;
  let requestsBeforeEach = 0;

  before(async () => {
    corpus = await listen(serveProvider(adapter).fetch, "127.0.0.1", 0);
    bare = await startServer(raw(501, "{}"));
    leaky = await startServer((_req, res, body) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-expand.v1",
        provider: "leaky",
        scope: "leaky",
        locator: JSON.parse(body).locator,
        title: `Runbook \ud800 ${LEAKED_TEXT}`,
        text: `Step one.\n\n${LEAKED_TEXT}\n\nStep two \udfff.`,
        content_type: "text/plain",
        retrieved_at: "2025-01-01T00:00:00Z",
      }));
    });
    app = gateway([
      { name: "notes", scope: "notes", endpoint: `http://127.0.0.1:${corpus.port}/search` },
      { name: "bare", scope: "bare", endpoint: bare.url },
      {
        name: "secret",
        scope: "secret",
        endpoint: bare.url,
        sensitivity: "internal",
        isolated: true,
      },
      { name: "down", scope: "down", endpoint: "http://127.0.0.1:1/search", timeout_seconds: 2 },
      { name: "leaky", scope: "leaky", endpoint: leaky.url },
    ]);
  });
  after(async () => {
    await corpus.close();
    await bare.close();
    await leaky.close();
  });

  it("answers the evidence behind a locator the provider issued", async () => {
    const { res, body } = await expand(app, {
      provider: "notes",
      locator: "https://notes.example/deadlines",
    });
    assert.equal(res.status, 200);
    assert.equal(body.command, "expand");
    assert.equal(body.result.provider, "notes");
    assert.equal(body.result.evidence.title, "Deadlines");
    assert.equal(body.result.evidence.text, DOCS[0]?.text);
    assert.equal(body.result.evidence.locator, "https://notes.example/deadlines");
    assert.equal(body.result.evidence.truncated, false);
  });

  it("tells locator_unknown (404) from locator_expired (410), neither an empty success", async () => {
    const unknown = await expand(app, {
      provider: "notes",
      locator: "https://notes.example/never",
    });
    assert.equal(unknown.res.status, 404);
    assert.equal(unknown.body.code, "locator_unknown");
    assert.equal(unknown.body.ok, false);
    assert.equal(unknown.body.result, undefined);

    // The corpus reloads without "retries": the locator it issued is now expired, not unknown.
    current = [DOCS[0] as CorpusDocument];
    await adapter.refresh?.(AbortSignal.timeout(5_000));
    const expired = await expand(app, {
      provider: "notes",
      locator: "https://notes.example/retries",
    });
    assert.equal(expired.res.status, 410);
    assert.equal(expired.body.code, "locator_expired");
    assert.equal(expired.body.action, "fix_input");
  });

  it("answers action_unsupported when the provider does not implement expand", async () => {
    const { res, body } = await expand(app, { provider: "bare", locator: "x" });
    assert.equal(res.status, 400);
    assert.equal(body.code, "action_unsupported");
    assert.match(body.error.message, /"bare" does not implement expand/);
  });

  it("answers provider_failed, retryable, when the provider cannot be reached", async () => {
    const { res, body } = await expand(app, { provider: "down", locator: "x" });
    assert.equal(res.status, 502);
    assert.equal(body.code, "provider_failed");
    assert.equal(body.retryable, true);
    assert.equal(body.action, "retry");
  });

  it("refuses a sensitive provider to a caller without a token, sending it nothing", async () => {
    requestsBeforeEach = bare.requests.length;
    const { res, body } = await expand(app, { provider: "secret", locator: "x" });
    assert.equal(res.status, 401);
    assert.equal(body.code, "unauthorized");
    assert.equal(bare.requests.length, requestsBeforeEach);
  });

  it("refuses unknown providers, unknown fields and over-long locators before contacting anyone", async () => {
    const unknown = await expand(app, { provider: "nope", locator: "x" });
    assert.equal(unknown.body.code, "unknown_provider");
    assert.doesNotMatch(unknown.body.error.message, /secret/, "a hidden provider is never named");
    const field = await expand(app, { provider: "notes", locator: "x", url: "y" });
    assert.equal(field.body.code, "unknown_field");
    assert.equal(field.body.error.field, "url");
    const long = await expand(app, {
      provider: "notes",
      locator: "a".repeat(MAX_LOCATOR_CHARS + 1),
    });
    assert.equal(long.body.code, "invalid_field");
    assert.equal(long.body.error.field, "locator");
    const fits = await expand(app, { provider: "notes", locator: "😀".repeat(MAX_LOCATOR_CHARS) });
    assert.equal(fits.body.code, "locator_unknown", "the limit counts code points");
    const notJson = await expand(app, "{");
    assert.equal(notJson.body.code, "invalid_json");
  });

  it("redacts secrets in the evidence's title and text, keeping its lines, and replaces lone surrogates", async () => {
    const res = await app.request("/v1/expand", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "leaky", locator: "https://leaky.example/runbook" }),
    });
    const text = await res.text();
    assert.equal(res.status, 200);
    for (const secret of [EXPAND_SECRET, ...SECRETS.map((s) => s.secret)]) {
      assert.ok(!text.includes(secret), `${JSON.stringify(secret)} reached the caller`);
    }
    const { title, text: evidence } = assertEnvelope(JSON.parse(text)).result.evidence;
    assert.match(title, /^Runbook \uFFFD Authorization: Bearer \[redacted\]/);
    assert.match(evidence, /^Step one\.\n\nAuthorization: Bearer \[redacted\]/);
    assert.match(evidence, /\n\nStep two \uFFFD\.$/);
  });

  it("answers 405 with Allow: POST to a GET", async () => {
    const res = await app.request("/v1/expand");
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST");
  });
});
