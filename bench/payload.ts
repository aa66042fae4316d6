/**
 * Realistic provider answers: titles of a few words, snippets of about 200 characters, locators of
 * which half are shared between providers (so dedupe and fusion have work to do), and a little
 * metadata. Deterministic, so every run sends the same bytes.
 */
import { seeded } from "../tests/support/random.ts";

const WORDS = (
  "deadline retry budget cancellation stream provider gateway fusion ranking cache latency " +
  "timeout request header payload schema envelope partial failure backoff queue shard replica " +
  "index query token session search result network socket buffer memory bound reader protocol " +
  "version upgrade migration release incident review pattern edge worker runtime isolate"
).split(" ");

function words(next: () => number, count: number): string[] {
  return Array.from({ length: count }, () => WORDS[Math.floor(next() * WORDS.length)] as string);
}

export type BenchCandidate = {
  title: string;
  locator: string;
  snippet: string;
  published_at: string;
  metadata: Record<string, unknown>;
};

export function candidates(provider: string, count: number): BenchCandidate[] {
  let seed = 0;
  for (const ch of provider) seed = (seed * 31 + ch.charCodeAt(0)) >>> 0;
  const next = seeded(seed);
  return Array.from({ length: count }, (_, i) => {
    const title = words(next, 5 + Math.floor(next() * 5))
      .map((w) => w[0]?.toUpperCase() + w.slice(1))
      .join(" ");
    let snippet = "";
    while (snippet.length < 200) {
      snippet += `${words(next, 6 + Math.floor(next() * 6)).join(" ")}. `;
    }
    const shared = i % 2 === 0;
    return {
      title,
      locator: shared
        ? `https://docs.example.org/articles/${i}-${title.toLowerCase().replaceAll(" ", "-")}`
        : `https://${provider}.example.com/pages/${i}?ref=search`,
      snippet: snippet.slice(0, 200).trim(),
      published_at: `2025-${String(1 + (i % 12)).padStart(2, "0")}-${
        String(1 + (i % 28)).padStart(2, "0")
      }`,
      metadata: { source: provider, score: Math.round(next() * 1000) / 1000, lang: "en" },
    };
  });
}

/** A valid tracefetch.provider-response.v1 body. */
export function answerBody(provider: string, scope: string, list: BenchCandidate[]): string {
  return JSON.stringify({
    schema_version: "tracefetch.provider-response.v1",
    provider,
    scope,
    candidates: list,
    warnings: [],
  });
}

/** The opening of an answer that never ends, and a 64 KiB chunk that keeps it valid-looking JSON. */
export function endlessParts(provider: string, scope: string): { head: string; chunk: Buffer } {
  const head = `{"schema_version":"tracefetch.provider-response.v1","provider":"${provider}",` +
    `"scope":"${scope}","candidates":[`;
  const one = JSON.stringify(candidates(provider, 1)[0]) + ",";
  const size = 64 * 1024;
  const chunk = Buffer.alloc(size, " ");
  let at = 0;
  while (at + one.length <= size) at += chunk.write(one, at);
  return { head, chunk };
}
