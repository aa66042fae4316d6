/**
 * Conformance transcripts of the example providers, committed in tests/fixtures/conformance/ and
 * replayed: every run masks what changes between runs, then must match the file byte for byte.
 * `UPDATE_FIXTURES=1` rewrites the files after an intended change.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";
import {
  CONFORMANCE_CASES,
  type ConformanceReport,
  formatTranscript,
  NONSENSE_QUERY_PREFIX,
} from "../../src/kit/mod.ts";

/** Ports, the random honest-empty token, trace ids and read times change every run; nothing else may. */
export function maskTranscript(transcript: string): string {
  return transcript
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>")
    .replace(
      new RegExp(`${NONSENSE_QUERY_PREFIX}[0-9a-f]{16}`, "g"),
      `${NONSENSE_QUERY_PREFIX}<random>`,
    )
    .replace(/00-[0-9a-f]{32}-[0-9a-f]{16}-01/g, "00-<trace-id>-<span-id>-01")
    // When a provider read what it expands is the time of the run.
    .replace(/"retrieved_at":"[^"]*"/g, '"retrieved_at":"<time>"');
}

/** The cases that failed, sorted. */
export const failedCases = (report: { cases: Array<{ case: string; verdict: string }> }) =>
  report.cases.filter((c) => c.verdict === "fail").map((c) => c.case).sort();

/**
 * Every case passed, in CONFORMANCE_CASES order, and the masked transcript equals
 * tests/fixtures/conformance/<fixture>.txt (written first when UPDATE_FIXTURES=1).
 */
export async function assertConformsAndReplays(
  report: ConformanceReport,
  fixture: string,
): Promise<void> {
  assert.deepEqual(failedCases(report), [], formatTranscript(report));
  assert.deepEqual(report.cases.map((c) => c.case), CONFORMANCE_CASES.map((c) => c.case));
  const transcript = maskTranscript(formatTranscript(report));
  const file = new URL(`../fixtures/conformance/${fixture}.txt`, import.meta.url);
  if (process.env.UPDATE_FIXTURES === "1") await writeFile(file, transcript);
  assert.equal(
    transcript,
    await readFile(file, "utf8"),
    `the transcript of ${fixture} changed; if intended, regenerate it with UPDATE_FIXTURES=1`,
  );
}
