/**
 * The evidence routes' pieces that need no page: the strict fetch and verify requests, a receipt
 * the gateway's signer makes (checked with jose alone), and each verdict of a verify.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import {
  DEFAULT_FETCH_CHARS,
  MAX_FETCH_CHARS,
  parseFetchRequestText,
  parseVerifyRequestText,
  RECEIPT_TYP,
} from "../src/protocol/mod.ts";
import { createProviderTokenSigner } from "../src/auth/provider-token-signer.ts";
import { type ReceiptFacts, signReceipt } from "../src/auth/fetch-receipt.ts";
import { verifyEvidence } from "../src/evidence/verify-evidence.ts";
import { findQuote } from "../src/evidence/find-quote.ts";
import { sha256Hex } from "../src/io/digests.ts";
import { keyPair } from "./support/auth-keys.ts";

const ISSUER = "https://gateway.test";
const MARKDOWN =
  "# Tides\n\nThe moon pulls the sea.\n\n## Springs\n\nSpring tides come\nwith a new moon.\n";

async function facts(markdown = MARKDOWN): Promise<ReceiptFacts> {
  return {
    requested_url: "http://127.0.0.1:9/tides",
    final_url: "http://127.0.0.1:9/tides",
    status_code: 200,
    fetched_at: "2026-12-06T04:00:00.000Z",
    content_type: "text/html",
    source_sha256: "a".repeat(64),
    markdown_sha256: await sha256Hex(markdown),
    format: "markdown",
  };
}

const ANCHORS = [
  { id: "tides", heading: "Tides", level: 1, line_start: 1, line_end: 4, sha256: "0".repeat(64) },
  {
    id: "springs",
    heading: "Springs",
    level: 2,
    line_start: 5,
    line_end: 9,
    sha256: "0".repeat(64),
  },
];

async function signer() {
  const key = await keyPair("EdDSA", "gw-1");
  return createProviderTokenSigner(JSON.stringify(key.privateJwk));
}

describe("fetch and verify requests", () => {
  it("a fetch request takes its defaults and refuses what a search request refuses", () => {
    const ok = parseFetchRequestText('{"url":"https://example.org/a"}');
    assert.deepEqual(ok, {
      ok: true,
      request: {
        url: "https://example.org/a",
        format: "markdown",
        max_chars: DEFAULT_FETCH_CHARS,
        timeout_ms: 10_000,
        include_raw: false,
        max_passages: 3,
      },
    });
    const code = (text: string) => {
      const parsed = parseFetchRequestText(text);
      return parsed.ok ? "ok" : `${parsed.problem.code}:${parsed.problem.field ?? ""}`;
    };
    assert.equal(code('{"url":"https://a.org","urls":1}'), "unknown_field:urls");
    assert.equal(code('{"url":null}'), "null_field:url");
    assert.equal(code("{}"), "invalid_field:url");
    assert.equal(code('{"url":"https://a.org","url":"https://b.org"}'), "invalid_field:url");
    assert.equal(code('{"url":"\\ud800"}'), "invalid_utf8:");
    assert.equal(
      code(`{"url":"https://a.org","max_chars":${MAX_FETCH_CHARS + 1}}`),
      "invalid_field:max_chars",
    );
    assert.equal(code('{"url":"https://a.org","max_chars":0}'), "invalid_field:max_chars");
    assert.equal(code('{"url":"https://a.org","format":"html"}'), "invalid_field:format");
    assert.equal(code('{"url":"https://a.org","timeout_ms":0}'), "timeout_out_of_range:timeout_ms");
    assert.equal(
      code('{"url":"https://a.org","max_age_seconds":-1}'),
      "invalid_field:max_age_seconds",
    );
    assert.equal(code('{"url":"https://a.org","max_age_seconds":0,"format":"text"}'), "ok");
    assert.equal(code("[1]"), "invalid_json:");
  });

  it("a verify request needs markdown; receipt and quote are optional, never null", () => {
    const parsed = parseVerifyRequestText('{"markdown":"x"}');
    assert.deepEqual(parsed, { ok: true, request: { receipt: null, markdown: "x", quote: null } });
    const refused = parseVerifyRequestText('{"markdown":"x","receipt":null}');
    assert.equal(refused.ok ? "" : refused.problem.code, "null_field");
    const blank = parseVerifyRequestText('{"markdown":"x","quote":"  "}');
    assert.equal(blank.ok ? "" : blank.problem.field, "quote");
    const unknown = parseVerifyRequestText('{"markdown":"x","qoute":"a"}');
    assert.match(unknown.ok ? "" : unknown.problem.message, /did you mean "quote"/);
  });
});

describe("receipts", () => {
  it("a receipt is a compact JWS jose checks against the published keys, typ naming a receipt", async () => {
    const s = await signer();
    const receipt = await signReceipt(s, ISSUER, await facts(), Date.now());
    const header = decodeProtectedHeader(receipt);
    assert.deepEqual(header, { alg: "EdDSA", typ: RECEIPT_TYP, kid: "gw-1" });
    const keys = createLocalJWKSet(s.publicJwks);
    const { payload } = await jwtVerify(receipt, keys, { issuer: ISSUER, typ: RECEIPT_TYP });
    assert.equal(payload.markdown_sha256, await sha256Hex(MARKDOWN));
    assert.equal(typeof payload.jti, "string");
    await compactVerify(receipt, keys);
  });
});

describe("verdicts", () => {
  const verify = async (
    ask: { receipt: string | null; markdown: string; quote: string | null },
  ) => {
    const s = await signer();
    const receipt = ask.receipt === "sign"
      ? await signReceipt(s, ISSUER, await facts(), 0)
      : ask.receipt;
    return await verifyEvidence(
      { ...ask, receipt },
      { jwks: s.publicJwks, issuer: ISSUER },
      () => Promise.resolve(ANCHORS),
    );
  };

  it("verified: a quote across a line break, in other case, with its lines and heading", async () => {
    const result = await verify({
      receipt: "sign",
      markdown: MARKDOWN,
      quote: "spring TIDES come with a",
    });
    assert.equal(result.verdict, "verified");
    assert.deepEqual(result.quote, {
      line_start: 7,
      line_end: 8,
      anchor: { id: "springs", heading: "Springs", level: 2 },
    });
  });

  it("quote_not_found, content_mismatch, unsigned", async () => {
    assert.equal(
      (await verify({ receipt: "sign", markdown: MARKDOWN, quote: "ebb" })).verdict,
      "quote_not_found",
    );
    assert.equal(
      (await verify({ receipt: "sign", markdown: `${MARKDOWN}!`, quote: null })).verdict,
      "content_mismatch",
    );
    assert.equal(
      (await verify({ receipt: null, markdown: MARKDOWN, quote: null })).verdict,
      "unsigned",
    );
  });

  it("signature_invalid: one claim changed, another gateway's key, another typ", async () => {
    const s = await signer();
    const receipt = await signReceipt(s, ISSUER, await facts(), 0);
    const [h, p, sig] = receipt.split(".") as [string, string, string];
    const claims = JSON.parse(atob(p.replaceAll("-", "+").replaceAll("_", "/")));
    claims.final_url = "http://127.0.0.1:9/other";
    const changed = `${h}.${
      btoa(JSON.stringify(claims)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")
    }.${sig}`;
    const keys = { jwks: s.publicJwks, issuer: ISSUER };
    const ask = { markdown: MARKDOWN, quote: null };
    assert.equal(
      (await verifyEvidence({ ...ask, receipt: changed }, keys, () => Promise.resolve([]))).verdict,
      "signature_invalid",
    );
    const other = await signer();
    const foreign = await signReceipt(other, ISSUER, await facts(), 0);
    assert.equal(
      (await verifyEvidence({ ...ask, receipt: foreign }, keys, () => Promise.resolve([]))).verdict,
      "signature_invalid",
    );
    const trace = await s.signDocument(
      new TextEncoder().encode("{}"),
      "tracefetch-trace-batch+jws",
    );
    const result = await verifyEvidence(
      { ...ask, receipt: trace },
      keys,
      () => Promise.resolve([]),
    );
    assert.equal(result.verdict, "signature_invalid");
    assert.equal(
      (await verifyEvidence({ ...ask, receipt }, null, () => Promise.resolve([]))).verdict,
      "unsigned",
    );
  });

  it("a quote is found after folding, never across what is not there", () => {
    assert.equal(findQuote("a  b\n\tc", "A B C", [])?.line_end, 2);
    assert.equal(findQuote("abc", "abd", []), null);
    assert.equal(findQuote("abc", "   ", []), null);
  });
});
