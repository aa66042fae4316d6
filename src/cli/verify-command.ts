/**
 * `tracefetch verify DIR [--quote TEXT] [--jwks FILE]`: checks a bundle `tracefetch fetch --out`
 * wrote, with no network (docs/cli.md): the receipt's signature against the bundle's jwks.json
 * (or the key set FILE holds, fetched by the person from a gateway they trust), normalized.md
 * against markdown_sha256, the raw body against source_sha256, and the quote in the text. The
 * verdict is the one `POST /v1/verify` gives, and an answer (`ok: true`) whatever it says.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { JWK } from "jose";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { VerifyResult } from "../protocol/evidence-schema.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { verifyEvidence } from "../evidence/verify-evidence.ts";
import { hex } from "../io/digests.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { problemReply } from "./usage-reply.ts";
import { readBundle } from "./evidence-bundle.ts";

export async function verifyCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("verify", "verify", args, ctx, {
    quote: { type: "string" },
    jwks: { type: "string" },
  }, {
    one: {
      message: (n) =>
        `verify takes one bundle folder, written by tracefetch fetch --out (got ${n} argument(s))`,
    },
  });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  const dir = positionals[0] as string;
  let bundle;
  try {
    bundle = await readBundle(dir);
  } catch (error) {
    return problemReply(
      "verify",
      "invalid_field",
      ctx.requestId,
      `${dir} is not a bundle tracefetch fetch --out wrote: ${(error as Error).message}`,
    );
  }
  let jwks = bundle.jwks;
  if (values.jwks !== undefined) {
    try {
      jwks = JSON.parse(await readFile(values.jwks, "utf8")) as { keys: JWK[] };
    } catch (error) {
      return problemReply(
        "verify",
        "invalid_field",
        ctx.requestId,
        `--jwks ${values.jwks} is not a JWK Set: ${(error as Error).message}`,
      );
    }
  }
  const result = await verifyBundle(dir, bundle, jwks, values.quote ?? null);
  const envelope = buildEnvelope("verify", "ok", ctx.requestId, { result });
  return { kind: "envelope", envelope, render: (paint) => renderVerify(envelope, paint) };
}

async function verifyBundle(
  dir: string,
  bundle: Awaited<ReturnType<typeof readBundle>>,
  jwks: { keys: JWK[] } | null,
  quote: string | null,
): Promise<VerifyResult> {
  const { receipt } = bundle;
  if (receipt.receipt !== null && jwks === null) {
    return {
      verdict: "unsigned",
      reason: "the bundle holds no jwks.json: name the gateway's key set with --jwks FILE",
    };
  }
  const verdict = await verifyEvidence(
    { receipt: receipt.receipt, markdown: bundle.text, quote },
    jwks === null ? null : { jwks, issuer: null },
    () => Promise.resolve(bundle.anchors),
  );
  if (verdict.verdict !== "verified" && verdict.verdict !== "quote_not_found") return verdict;
  // The signed source_sha256 covers the raw body: the bundle's copy must still be that body.
  const raw = Object.keys(receipt.files).find((name) => name.startsWith("raw."));
  if (raw !== undefined && verdict.claims !== undefined) {
    const bytes = new Uint8Array(await readFile(join(dir, raw)));
    const digest = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
    if (digest !== verdict.claims.source_sha256) {
      return {
        verdict: "content_mismatch",
        reason:
          `${raw}'s SHA-256 is ${digest}, the receipt's source_sha256 ${verdict.claims.source_sha256}`,
        claims: verdict.claims,
      };
    }
  }
  return verdict;
}

export function renderVerify(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("verdict" in result)) return "";
  const mark = result.verdict === "verified" ? paint.bold(result.verdict) : result.verdict;
  const lines = [`verdict: ${mark}`, result.reason];
  if (result.quote !== undefined) {
    const { line_start, line_end, anchor } = result.quote;
    lines.push(
      `quote at lines ${line_start}-${line_end}${
        anchor === null ? "" : ` under "${anchor.heading}"`
      }`,
    );
  }
  return `${lines.join("\n")}\n`;
}
