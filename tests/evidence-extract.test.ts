/**
 * The extractor on pages of the kinds an agent reads, in several languages (tests/fixtures/pages,
 * written for these tests): a blog, a government page, a news article, a forum thread, product and
 * documentation pages. Each keeps its main text and drops its cookie notice, menus, related lists,
 * share bars and footer; markdown keeps lists, GFM tables, block quotes, code and absolute links.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { extractPage } from "../src/evidence/extract-page.ts";

type Case = {
  file: string;
  /** Sentences of the main text, each of which must be in the markdown. */
  keep: string[];
  /** Boilerplate, none of which may be. */
  drop: string[];
};

const CASES: Case[] = [
  {
    file: "de-blog.html",
    keep: [
      "arbeitet der Sauerteig deutlich langsamer",
      "## Die richtige Wassertemperatur",
      "Ein Thermometer im Teig ist verlässlicher als das Gefühl.",
      "> Geduld ist beim Sauerteig die wichtigste Zutat",
    ],
    drop: [
      "Wir verwenden Cookies",
      "Alle akzeptieren",
      "Startseite",
      "Beliebte Beiträge",
      "Roggenbrot ohne Hefe",
      "Das könnte Sie auch interessieren",
      "Laugenbrezeln",
      "Twittern",
      "Impressum",
      "Veröffentlicht am",
    ],
  },
  {
    file: "fr-government.html",
    keep: [
      "pour un tarif réduit de 15 euros par mois",
      "## Pièces à fournir",
      "2.  Le certificat d'immatriculation du véhicule",
      "| Un an | 150 € | 900 € |",
      "[portail des démarches en ligne](https://demarches.example.org/stationnement)",
    ],
    drop: [
      "Ce site utilise des cookies",
      "Aller au contenu principal",
      "Vous êtes ici",
      "La mairie",
      "À lire aussi",
      "zone à faibles émissions",
      "Mentions légales",
    ],
  },
  {
    file: "zh-news.html",
    keep: ["青川市地铁五号线今天上午正式开通运营", "每天能多睡半个小时", "总里程将超过三百公里"],
    drop: [
      "首页",
      "相关新闻",
      "地铁六号线完成全线贯通",
      "热点排行",
      "春季花展",
      "分享到",
      "版权所有",
    ],
  },
  {
    file: "ru-forum.html",
    keep: [
      "Балкон застеклён, но зимой там минус пять",
      "экструдированный пенополистирол толщиной пять сантиметров",
      "Температура поднялась до плюс трёх",
    ],
    drop: [
      "Сообщений:",
      "Регистрация",
      "С уважением, Иван",
      "Консультации по выходным",
      "Похожие темы",
      "Утепление лоджии",
      "Правила форума",
      "» Как утеплить",
    ],
  },
  {
    file: "ar-news.html",
    keep: ["محطة جديدة لتحلية مياه البحر", "بتقنية التناضح العكسي", "المرحلة الثانية من المشروع"],
    drop: [
      "ملفات تعريف الارتباط",
      "الرئيسية",
      "الأكثر قراءة",
      "ارتفاع أسعار الذهب",
      "جميع الحقوق محفوظة",
      "بقلم",
    ],
  },
  {
    file: "en-docs.html",
    keep: [
      "A client retries a request that failed",
      "```ts\nconst client = new Client({",
      "| Field | Default | Meaning |\n| --- | --- | --- |",
      "| `attempts` | 3 | Attempts in all, the first included |",
      "> Note: a request with a body that cannot be replayed",
      "[per-request timeouts](https://site.example/docs/timeouts#per-request)",
    ],
    drop: [
      "Tidewater 4.0 is out",
      "Installation",
      "Logging",
      "← Clients",
      "Edit this page",
      "On this page",
      "Copyright ©",
    ],
  },
  {
    file: "en-shop.html",
    keep: [
      "cut from heavy 18 oz cotton canvas",
      "An inner pocket with a brass snap",
      "| Weight | 650 g |",
    ],
    drop: [
      "We use cookies",
      "Free shipping",
      "Add to cart",
      "Customers also bought",
      "Leather Key Fob",
      "Join our newsletter",
      "Returns",
    ],
  },
  {
    file: "en-forum-share.html",
    keep: [
      "We counted forty-one grey herons",
      "a single great white egret",
      "Next month we will count again",
    ],
    drop: ["Facebook", "Email", "More field notes", "Oystercatchers", "Seal pups", "Join"],
  },
];

function page(file: string): string {
  return readFileSync(new URL(`./fixtures/pages/${file}`, import.meta.url), "utf8");
}

async function extract(file: string, format: "markdown" | "text" = "markdown") {
  return await extractPage({
    body: page(file),
    kind: "html",
    url: new URL(`https://site.example/docs/guide/${file}`),
    format,
    maxChars: 100_000,
  });
}

describe("the extractor on pages of many kinds and languages", () => {
  for (const { file, keep, drop } of CASES) {
    it(`${file}: keeps the main text and drops the boilerplate`, async () => {
      const { content, route } = await extract(file);
      assert.equal(route, "extracted");
      for (const text of keep) assert.ok(content.includes(text), `kept: ${text}\n---\n${content}`);
      for (const text of drop) {
        assert.ok(!content.includes(text), `dropped: ${text}\n---\n${content}`);
      }
    });
  }

  it("drops the headline that repeats the title; the answer's title carries it", async () => {
    const { content, title } = await extract("de-blog.html");
    assert.equal(title, "Sauerteig im Winter – Backstube Lindenhof");
    assert.ok(!content.includes("# Sauerteig im Winter"));
  });

  it("writes a layout table of one column as its blocks, not as a pipe table", async () => {
    const { content } = await extractPage({
      body: `<html><body><table><tr><td><p>${
        "A paragraph of prose inside a layout table, as old sites still make them. ".repeat(3)
      }</p></td></tr></table></body></html>`,
      kind: "html",
      url: new URL("https://site.example/"),
      format: "markdown",
      maxChars: 10_000,
    });
    assert.match(content, /^A paragraph of prose inside a layout table/);
    assert.ok(!content.includes("|"));
  });

  it("gives the same main text without markup for format text", async () => {
    const { content } = await extract("en-docs.html", "text");
    assert.match(content, /^A client retries a request that failed/);
    assert.ok(content.includes("See per-request timeouts for bounding each attempt instead."));
    assert.ok(!content.includes("](https://"));
    assert.ok(!content.includes("```"));
    assert.ok(!/^#/m.test(content));
  });

  it("cuts a long page's text at max_chars as it cuts the whole page's markdown", async () => {
    const sections = Array.from(
      { length: 40 },
      (_, s) =>
        `<section><h2>Part ${s + 1}</h2><div><p>${
          `Sentence ${s} of the long report, with a <a href="/n/${s}">note</a> and more words. `
            .repeat(4)
        }</p><ul><li>First point of part ${s}</li><li>Second point</li></ul>${
          s % 5 === 0 ? `<pre><code>const part = ${s};\n</code></pre>` : ""
        }<table><tr><th>Key</th><th>Value</th></tr><tr><td>part</td><td>${s}</td></tr></table></div>` +
        `</section>`,
    ).join("\n");
    const body = `<html><head><title>Long report</title></head><body><main><article>` +
      `<h1>Long report</h1>${sections}</article></main></body></html>`;
    const url = new URL("https://site.example/report");
    for (const format of ["markdown", "text"] as const) {
      const whole = await extractPage({ body, kind: "html", url, format, maxChars: 200_000 });
      assert.ok(!whole.truncated && whole.content.length > 10_000);
      for (const maxChars of [700, 3_000, 8_000]) {
        const cut = await extractPage({ body, kind: "html", url, format, maxChars });
        const lines = cut.content.split("\n").length;
        assert.equal(cut.content, whole.content.slice(0, maxChars), `${format} ${maxChars}`);
        assert.ok(cut.truncated);
        assert.equal(cut.title, whole.title);
        assert.deepEqual(cut.links, whole.links);
        assert.deepEqual(
          cut.anchors.filter((a) => a.line_end < lines),
          whole.anchors.filter((a) => a.line_end < lines),
        );
        assert.deepEqual(
          cut.anchors.map((a) => a.line_start),
          whole.anchors.filter((a) => a.line_start <= lines).map((a) => a.line_start),
        );
      }
    }
  });

  it("lists the main text's links, absolute, and none of the menus'", async () => {
    const { links } = await extract("fr-government.html");
    assert.deepEqual(links, [{
      url: "https://demarches.example.org/stationnement",
      text: "portail des démarches en ligne",
    }]);
  });
});
