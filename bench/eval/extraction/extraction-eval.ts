/**
 * `npm run eval -- --extraction --data DIR`: the extractor against the article extraction
 * benchmark (SOURCE.md says where to get it; it is not kept in this repository). Every page goes
 * through extractPage as a fetch with `format: "text"` makes it, and through plain Readability over
 * linkedom in the same run; both are scored by the benchmark's token-shingle measure
 * (shingle-f1.ts), on the tuning half and on the held-out half (split-pages.ts), and drawn as a
 * chart. With `--via-fetch`, each page also goes through `POST /v1/fetch` (fetch-pages.ts), served
 * by a site on 127.0.0.1, and is scored as a third row.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { decodeBody } from "../../../src/evidence/decode-body.ts";
import { extractPage } from "../../../src/evidence/extract-page.ts";
import { prepareHtml } from "../../../src/evidence/html-text.ts";
import { MAX_FETCH_CHARS } from "../../../src/protocol/fetch-limits.ts";
import { renderExtractionChart } from "./extraction-chart.ts";
import { fetchPages } from "./fetch-pages.ts";
import { type PageCounts, pageCounts, pageF1, type Scores, scores } from "./shingle-f1.ts";
import { type Half, halfOf, HALVES } from "./split-pages.ts";

export const EXTRACTORS = ["ours", "readability", "ours via /v1/fetch"] as const;
export type Extractor = (typeof EXTRACTORS)[number];

type Truth = Record<string, { articleBody?: string; url?: string }>;

type PageResult = { id: string; half: Half; counts: Partial<Record<Extractor, PageCounts>> };

export type ExtractionReport = {
  pages: number;
  rows: Array<{ extractor: Extractor; half: Half | "all"; scores: Scores }>;
  worst: Array<{ id: string; half: Half; f1: number }>;
};

const NEEDS = `--extraction needs --data DIR: a local copy of the article extraction benchmark
(github.com/scrapinghub/article-extraction-benchmark, MIT), holding ground-truth.json and
html/<id>.html.gz for each of its 181 pages (bench/eval/extraction/SOURCE.md).`;

/** Pages the report lists as ours' worst, for reading by hand. */
const WORST_SHOWN = 10;

async function readTruth(dir: string): Promise<Truth | null> {
  try {
    return JSON.parse(await readFile(join(dir, "ground-truth.json"), "utf8")) as Truth;
  } catch {
    return null;
  }
}

/** Plain Readability over linkedom, as the benchmark's `readability_js` row runs it: its text. */
function readabilityText(html: string): string {
  const { document } = parseHTML(html);
  return new Readability(document as unknown as Document).parse()?.textContent ?? "";
}

async function oursText(html: string, url: URL): Promise<string> {
  const page = await extractPage({
    body: html,
    kind: "html",
    url,
    format: "text",
    maxChars: MAX_FETCH_CHARS,
  });
  return page.content;
}

export async function runExtractionEval(
  dir: string | undefined,
  options: { out: string; json: boolean; viaFetch: boolean },
): Promise<number> {
  if (dir === undefined) {
    console.error(NEEDS);
    return 2;
  }
  const truth = await readTruth(dir);
  if (truth === null) {
    console.error(`no ground-truth.json in ${dir}\n\n${NEEDS}`);
    return 2;
  }
  const ids = Object.keys(truth).sort();
  const pages = new Map<string, Uint8Array>();
  for (const id of ids) {
    try {
      pages.set(id, gunzipSync(await readFile(join(dir, "html", `${id}.html.gz`))));
    } catch {
      console.error(`missing or unreadable html/${id}.html.gz in ${dir}\n\n${NEEDS}`);
      return 2;
    }
  }
  const fetcher = options.viaFetch ? await fetchPages(pages) : null;
  const results: PageResult[] = [];
  try {
    for (const [index, id] of ids.entries()) {
      const html = decodeBody(pages.get(id) as Uint8Array, "text/html", true).text;
      const expected = truth[id]?.articleBody ?? "";
      const url = new URL(truth[id]?.url ?? "https://benchmark.invalid/");
      results.push({
        id,
        half: halfOf(index),
        counts: {
          ours: pageCounts(expected, await oursText(html, url)),
          // Readability is handed what ours is handed: scripts and styles out, the same cap.
          readability: pageCounts(expected, readabilityText(prepareHtml(html).html)),
          ...(fetcher
            ? { "ours via /v1/fetch": pageCounts(expected, await fetcher.text(id)) }
            : {}),
        },
      });
    }
  } finally {
    await fetcher?.close();
  }
  const extractors = EXTRACTORS.filter((e) => results[0]?.counts[e] !== undefined);
  const report: ExtractionReport = {
    pages: results.length,
    rows: extractors.flatMap((extractor) =>
      [...HALVES, "all" as const].map((half) => ({
        extractor,
        half,
        scores: scores(
          results.filter((r) => half === "all" || r.half === half)
            .flatMap((r) => r.counts[extractor] ?? []),
        ),
      }))
    ),
    worst: results.filter((r) => r.half === "tuning")
      .map((r) => ({ id: r.id, half: r.half, f1: pageF1(r.counts.ours as PageCounts) }))
      .sort((a, b) => a.f1 - b.f1)
      .slice(0, WORST_SHOWN),
  };
  if (options.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    console.log(formatReport(report));
  }
  await mkdir(options.out, { recursive: true });
  const file = join(options.out, "extraction.svg");
  await writeFile(file, renderExtractionChart(report.rows));
  console.error(`wrote ${file}`);
  return 0;
}

function formatReport(report: ExtractionReport): string {
  const lines = [
    `article extraction benchmark, ${report.pages} pages (token 4-shingles; tuning: even positions of the sorted ids, held-out: odd)`,
    "",
    `${"extractor".padEnd(18)} ${"half".padEnd(9)} ${"pages".padStart(5)}  ${"F1".padStart(6)}  ${
      "precision".padStart(9)
    }  ${"recall".padStart(6)}`,
  ];
  for (const { extractor, half, scores: s } of report.rows) {
    lines.push(
      `${extractor.padEnd(18)} ${half.padEnd(9)} ${String(s.pages).padStart(5)}  ${
        s.f1.toFixed(3).padStart(6)
      }  ${s.precision.toFixed(3).padStart(9)}  ${s.recall.toFixed(3).padStart(6)}`,
    );
  }
  lines.push("", "ours' worst pages of the tuning half (F1):");
  for (const w of report.worst) lines.push(`  ${w.id.slice(0, 16)}  ${w.f1.toFixed(3)}`);
  return lines.join("\n");
}
