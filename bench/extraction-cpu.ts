/**
 * Scenario 8's extraction rows: the CPU of extracting a page, ours (extractPage, markdown, the
 * whole of what a fetch runs on a page's text) against plain Readability over linkedom (parse and
 * `parse()`, no markdown written), on the same pages, taking turns page by page so that a busy
 * machine weighs on both alike. The pages: the test pages of tests/fixtures/pages and the
 * scenario's 100 KB article, and with `--extraction-data DIR` the article extraction benchmark's
 * pages too (bench/eval/extraction/SOURCE.md). Bars: ours' p50 at most 1.5x Readability's, and no
 * page over 2 s.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { decodeBody } from "../src/evidence/decode-body.ts";
import { extractPage } from "../src/evidence/extract-page.ts";
import { prepareHtml } from "../src/evidence/html-text.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50 } from "./stats.ts";

/** The bars. */
const RATIO_TARGET = 1.5;
const PAGE_MAX_MS = 2_000;
/** Rounds over the pages after one unmeasured round: few pages need more rounds for a p50. */
const ROUNDS_FEW = 20;
const ROUNDS_MANY = 2;
/** From this many pages on, ROUNDS_MANY rounds are enough. */
const MANY_PAGES = 100;

const FIXTURES = new URL("../tests/fixtures/pages/", import.meta.url);

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function benchmarkPages(dir: string): Promise<string[]> {
  const names = (await readdir(join(dir, "html"))).filter((n) => n.endsWith(".html.gz")).sort();
  return await Promise.all(names.map(async (name) => {
    const bytes = gunzipSync(await readFile(join(dir, "html", name)));
    return decodeBody(bytes, "text/html", true).text;
  }));
}

export async function extractionRows(article: string, dataDir?: string): Promise<Row[]> {
  const fixtures = await Promise.all(
    (await readdir(FIXTURES)).sort().map((name) => readFile(new URL(name, FIXTURES), "utf8")),
  );
  const pages = [article, ...fixtures, ...(dataDir ? await benchmarkPages(dataDir) : [])];
  const url = new URL("https://bench.invalid/page");
  const ours: number[] = [];
  const theirs: number[] = [];
  const rounds = pages.length >= MANY_PAGES ? ROUNDS_MANY : ROUNDS_FEW;
  for (let round = 0; round <= rounds; round++) {
    for (const html of pages) {
      let before = cpuMs();
      await extractPage({ body: html, kind: "html", url, format: "markdown", maxChars: 20_000 });
      const own = cpuMs() - before;
      before = cpuMs();
      // Readability is handed what ours is handed: scripts and styles out, the same cap.
      const { document } = parseHTML(prepareHtml(html).html);
      new Readability(document as unknown as Document).parse();
      const other = cpuMs() - before;
      if (round === 0) continue;
      ours.push(own);
      theirs.push(other);
    }
  }
  const ratio = p50(ours) / p50(theirs);
  const slowest = Math.max(...ours);
  return [{
    measurement: `8 extraction of ${pages.length} pages, CPU p50 (max)`,
    gateway: `${ms(p50(ours))} (${ms(slowest)})`,
    naive: "",
    reference: `Readability over linkedom ${ms(p50(theirs))} (${ms(Math.max(...theirs))}); ratio ${
      ratio.toFixed(2)
    }`,
    target: `<= ${RATIO_TARGET}x Readability, none over ${PAGE_MAX_MS / 1000} s`,
    result: verdict(ratio <= RATIO_TARGET && slowest <= PAGE_MAX_MS),
  }];
}
