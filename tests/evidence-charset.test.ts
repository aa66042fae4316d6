/**
 * A page's bytes read in the right encoding, over a real site on 127.0.0.1: the byte order mark,
 * then the Content-Type's charset, then a `<meta>`, then UTF-8, then windows-1252; and markdown a
 * site serves, used as served but bounded by max_chars and hashed as returned.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeBody, headerCharset, metaCharset } from "../src/evidence/decode-body.ts";
import { type Evidence, fetchEvidence } from "../src/evidence/mod.ts";
import { fetchDeps, listen, type Listener, request } from "./support/fetch-fixture.ts";
import { OPEN, sha256, text } from "./support/evidence-site.ts";

const bytes = (...parts: Array<string | ArrayLike<number>>) => {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === "string") out.push(...new TextEncoder().encode(part));
    else out.push(...Array.from(part));
  }
  return new Uint8Array(out);
};

/** "Привет, мир" in KOI8-R. */
const KOI8R_GREETING = [0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4, 0x2c, 0x20, 0xcd, 0xc9, 0xd2];
/** "日本語" in Shift_JIS. */
const SJIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea];
/** "中文" in GBK. */
const GBK_ZHONGWEN = [0xd6, 0xd0, 0xce, 0xc4];
/** "café “quoted”" in windows-1252: é is 0xE9, the curly quotes 0x93 and 0x94. */
const CP1252_CAFE = [0x63, 0x61, 0x66, 0xe9, 0x20, 0x93, 0x71, 0x75, 0x6f, 0x74, 0x65, 0x64, 0x94];

const page = (head: string, body: number[]) =>
  bytes(
    `<!doctype html><html><head>${head}<title>Charset</title></head><body><article><p>`,
    body,
    ` is the paragraph of this page, long enough to be its main text.</p></article></body></html>`,
  );

let site: Listener;
let base: string;
before(async () => {
  site = await listen("127.0.0.1", 0, {
    "/koi8r-header": text("text/html; charset=koi8-r", page("", KOI8R_GREETING)),
    "/sjis-meta": text("text/html", page('<meta charset="shift_jis">', SJIS_NIHONGO)),
    "/gbk-http-equiv": text(
      "text/html",
      page('<meta http-equiv="Content-Type" content="text/html; charset=gb2312">', GBK_ZHONGWEN),
    ),
    "/cp1252-undeclared": text("text/html", page("", CP1252_CAFE)),
    "/bom-over-header": text(
      "text/html; charset=iso-8859-1",
      bytes([0xef, 0xbb, 0xbf], page("", [...new TextEncoder().encode("naïve ✓")])),
    ),
    "/utf8-undeclared": text("text/html", page("", [...new TextEncoder().encode("Zürich ✓")])),
    "/koi8r-text": text("text/plain; charset=koi8-r", bytes(KOI8R_GREETING)),
    "/long.md": text(
      "text/markdown; charset=utf-8",
      `# Served long\n\n${"A line of served markdown.\n".repeat(400)}`,
    ),
  });
  base = `http://127.0.0.1:${site.port}`;
});
after(() => site.close());

async function fetched(path: string, extra: Parameters<typeof request>[1] = {}) {
  const { deps } = fetchDeps("127.0.0.1:9");
  const outcome = await fetchEvidence(request(`${base}${path}`, extra), OPEN, deps);
  assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
  return (outcome as { evidence: Evidence }).evidence;
}

const content = (evidence: Evidence) =>
  "markdown" in evidence ? evidence.markdown : (evidence as { text: string }).text;

describe("a page's encoding", () => {
  it("is the Content-Type's charset when it names one (KOI8-R)", async () => {
    assert.match(content(await fetched("/koi8r-header")), /Привет, мир is the paragraph/);
  });

  it("is a <meta charset> when the header names none (Shift_JIS)", async () => {
    assert.match(content(await fetched("/sjis-meta")), /日本語 is the paragraph/);
  });

  it("is a <meta http-equiv> Content-Type's charset (gb2312, read as GBK)", async () => {
    assert.match(content(await fetched("/gbk-http-equiv")), /中文 is the paragraph/);
  });

  it("is windows-1252 for bytes that are not UTF-8 and declare nothing", async () => {
    assert.match(content(await fetched("/cp1252-undeclared")), /café “quoted” is the paragraph/);
  });

  it("is UTF-8 for valid UTF-8 that declares nothing", async () => {
    assert.match(content(await fetched("/utf8-undeclared")), /Zürich ✓ is the paragraph/);
  });

  it("is the byte order mark's, over the header's, and the mark is not text", async () => {
    const evidence = await fetched("/bom-over-header");
    assert.match(content(evidence), /^naïve ✓ is the paragraph/m);
    assert.ok(!content(evidence).includes("\ufeff"));
  });

  it("is the header's for served text too", async () => {
    assert.equal(content(await fetched("/koi8r-text")), "Привет, мир");
  });

  it("hashes the bytes as received, whatever the encoding", async () => {
    const evidence = await fetched("/koi8r-header");
    assert.equal(evidence.source_sha256, sha256(page("", KOI8R_GREETING)));
  });
});

describe("decodeBody", () => {
  it("says where the encoding came from", () => {
    const cases: Array<[Uint8Array, string, string, string]> = [
      [bytes([0xef, 0xbb, 0xbf], "x"), "text/html; charset=koi8-r", "bom", "utf-8"],
      [bytes([0xff, 0xfe, 0x78, 0x00]), "text/html", "bom", "utf-16le"],
      [bytes(KOI8R_GREETING), "text/plain; charset=KOI8-R", "header", "koi8-r"],
      [bytes('<meta charset="windows-1251">'), "text/html", "meta", "windows-1251"],
      [bytes("plain ascii"), "text/html", "utf-8", "utf-8"],
      [bytes(CP1252_CAFE), "text/html", "fallback", "windows-1252"],
      // A charset no runtime knows is passed over for the next rule.
      [bytes("ok"), "text/html; charset=x-unknown-9", "utf-8", "utf-8"],
    ];
    for (const [body, type, source, encoding] of cases) {
      const decoded = decodeBody(body, type, true);
      assert.deepEqual([decoded.source, decoded.encoding], [source, encoding], type);
    }
  });

  it("reads windows-1252's 0x80-0x9F as the Encoding Standard says, on every runtime", () => {
    const all = new Uint8Array(32).map((_, i) => 0x80 + i);
    const decoded = decodeBody(all, "text/plain; charset=windows-1252", false).text;
    assert.equal(decoded[0], "€");
    assert.equal(decoded[0x13], "“");
    assert.equal(decoded[0x1f], "Ÿ");
    // The five bytes windows-1252 leaves undefined stay as their C1 controls.
    assert.equal(decoded[0x01], "\x81");
  });

  it("treats a <meta> naming UTF-16 as UTF-8, and reads no meta for text", () => {
    const body = bytes('<meta charset="utf-16"><p>é</p>');
    assert.equal(decodeBody(body, "text/html", true).encoding, "utf-8");
    assert.equal(decodeBody(bytes('<meta charset="koi8-r">'), "text/plain", false).source, "utf-8");
  });

  it("finds charsets in headers and tags written every usual way", () => {
    assert.equal(headerCharset('text/html; charset="Shift_JIS"'), "Shift_JIS");
    assert.equal(headerCharset("text/html;charset=gbk"), "gbk");
    assert.equal(headerCharset("text/html"), null);
    assert.equal(metaCharset(bytes("<META CHARSET=koi8-r>")), "koi8-r");
    assert.equal(metaCharset(bytes("<meta charset='euc-kr' />")), "euc-kr");
    assert.equal(
      metaCharset(bytes('<meta content="text/html; charset=big5" http-equiv="content-type">')),
      "big5",
    );
    assert.equal(metaCharset(bytes('<meta name="description" content="charset=big5">')), null);
  });
});

describe("markdown a site serves", () => {
  it("is used as served, cut at max_chars, and hashed as returned", async () => {
    const evidence = await fetched("/long.md", { max_chars: 500 });
    assert.equal(evidence.route, "markdown_served");
    const markdown = content(evidence);
    assert.equal(markdown.length, 500);
    assert.ok(markdown.startsWith("# Served long\n\nA line of served markdown.\n"));
    assert.equal(evidence.truncated, true);
    assert.equal(evidence.markdown_sha256, sha256(markdown));
    assert.equal(evidence.title, "Served long");
  });

  it("comes back as its text, without markup, for format text", async () => {
    const evidence = await fetched("/long.md", { format: "text", max_chars: 200 });
    assert.equal(evidence.route, "markdown_served");
    assert.ok(content(evidence).startsWith("Served long\n\nA line of served markdown."));
    assert.equal(evidence.markdown_sha256, sha256(content(evidence)));
  });
});
