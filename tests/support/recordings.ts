/**
 * The recorded upstream answers in tests/fixtures/recordings/ (hand-made from the public API
 * documentation; see its README): one exchange per file.
 */
import { readFileSync } from "node:fs";

export type Recording = {
  /** What the adapter must ask; `query` (in the success files) holds every query parameter. */
  request: { method: string; path: string; query?: Record<string, string> };
  /** `body` as JSON, or `body_text` for a body that is not JSON. */
  response: { status: number; headers: Record<string, string>; body?: unknown; body_text?: string };
};

/** tests/fixtures/recordings/<name>.json */
export const recording = (name: string): Recording =>
  JSON.parse(
    readFileSync(new URL(`../fixtures/recordings/${name}.json`, import.meta.url), "utf8"),
  );
