/**
 * An evidence bundle on disk (docs/cli.md, "fetch and verify"), as TraceFetch 1.0 lays one out:
 *
 *   raw.<ext>        the body as the gateway received it (decoded), whose SHA-256 is source_sha256
 *   normalized.md    the markdown (or text) the receipt's markdown_sha256 covers, byte for byte
 *   anchors.jsonl    one anchor per line: id, heading, level, line_start, line_end, sha256
 *   links.json       the page's links: [{url, text}]
 *   receipt.json     the signed receipt (or null), its claims as the gateway sent them, the
 *                    evidence's other fields, and the SHA-256 of every other file
 *   jwks.json        the gateway's /.well-known/jwks.json, fetched once when the bundle was written
 *
 * `tracefetch verify DIR` reads it back with no network: the receipt is checked against
 * jwks.json (or a key set the person names), the files against their hashes.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JWK } from "jose";
import type { FetchResult } from "../protocol/evidence-schema.ts";
import { evidenceText } from "../protocol/evidence-schema.ts";
import { type Anchor } from "../protocol/evidence-schema.ts";
import { hex } from "../io/digests.ts";

export const BUNDLE_VERSION = "tracefetch-edge.bundle.v1";

/** receipt.json: what `verify DIR` starts from. */
export type BundleReceipt = {
  bundle: typeof BUNDLE_VERSION;
  receipt: string | null;
  gateway: string;
  format: "markdown" | "text";
  evidence: Record<string, unknown>;
  files: Record<string, string>;
};

/** The extension of the raw body, by its content type: what a person's tools open it with. */
export function rawExtension(contentType: string): string {
  const essence = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  switch (essence) {
    case "text/html":
      return "html";
    case "application/xhtml+xml":
      return "xhtml";
    case "text/markdown":
    case "text/x-markdown":
      return "md";
    default:
      return "txt";
  }
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** Writes the bundle of one fetch into `dir` (made if missing); answers the files written. */
export async function writeBundle(
  dir: string,
  result: FetchResult,
  jwks: { keys: JWK[] } | null,
  gateway: string,
): Promise<string[]> {
  const { evidence } = result;
  const text = evidenceText(evidence);
  const raw = result.raw_base64 === undefined
    ? null
    : Uint8Array.from(atob(result.raw_base64), (c) => c.charCodeAt(0));
  const encoder = new TextEncoder();
  const files: Record<string, Uint8Array<ArrayBuffer>> = {
    "normalized.md": encoder.encode(text),
    "anchors.jsonl": encoder.encode(
      evidence.anchors.map((a) => JSON.stringify(a)).join("\n") +
        (evidence.anchors.length > 0 ? "\n" : ""),
    ),
    "links.json": encoder.encode(`${JSON.stringify(evidence.links, null, 2)}\n`),
  };
  if (raw !== null) files[`raw.${rawExtension(evidence.content_type)}`] = raw;
  if (jwks !== null) files["jwks.json"] = encoder.encode(`${JSON.stringify(jwks, null, 2)}\n`);
  const hashes: Record<string, string> = {};
  for (const [name, bytes] of Object.entries(files)) hashes[name] = await sha256(bytes);
  const { anchors: _a, links: _l, ...rest } = evidence;
  const { markdown: _m, text: _t, ...meta } = rest as typeof rest & {
    markdown?: string;
    text?: string;
  };
  const receipt: BundleReceipt = {
    bundle: BUNDLE_VERSION,
    receipt: result.receipt,
    gateway,
    format: "markdown" in evidence ? "markdown" : "text",
    evidence: meta,
    files: hashes,
  };
  files["receipt.json"] = encoder.encode(`${JSON.stringify(receipt, null, 2)}\n`);
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(dir, name), bytes);
  return Object.keys(files);
}

/** A bundle read back: its receipt file, text, anchors, and each listed file's actual hash. */
export type ReadBundle = {
  receipt: BundleReceipt;
  text: string;
  anchors: Anchor[];
  jwks: { keys: JWK[] } | null;
  /** Listed files whose bytes no longer match their hash (or are missing). */
  altered: string[];
};

export async function readBundle(dir: string): Promise<ReadBundle> {
  const receipt = JSON.parse(await readFile(join(dir, "receipt.json"), "utf8")) as BundleReceipt;
  if (receipt.bundle !== BUNDLE_VERSION) {
    throw new Error(`${dir}/receipt.json is not a ${BUNDLE_VERSION} bundle`);
  }
  const altered: string[] = [];
  for (const [name, want] of Object.entries(receipt.files)) {
    const bytes = await readFile(join(dir, name)).catch(() => null);
    if (bytes === null || await sha256(new Uint8Array(bytes)) !== want) altered.push(name);
  }
  const text = await readFile(join(dir, "normalized.md"), "utf8");
  const anchorLines = await readFile(join(dir, "anchors.jsonl"), "utf8").catch(() => "");
  const anchors = anchorLines.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  const jwksText = await readFile(join(dir, "jwks.json"), "utf8").catch(() => null);
  return {
    receipt,
    text,
    anchors,
    jwks: jwksText === null ? null : JSON.parse(jwksText),
    altered,
  };
}
