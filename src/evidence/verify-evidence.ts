/**
 * `POST /v1/verify` and `tracefetch verify` (docs/envelope.md, "Fetching a page"): the verdict on
 * a receipt, the text it covers and a quote. Checked in order, the first failure deciding: the
 * signature against the given keys (`signature_invalid`), the text against `markdown_sha256`
 * (`content_mismatch`), the quote in the text (`quote_not_found`); all three hold: `verified`.
 * Without a receipt, or without keys to check one with, nothing can be vouched for: `unsigned`.
 */
import type { JWK } from "jose";
import type { VerifyAsk } from "../protocol/fetch-request.ts";
import type { Anchor, VerifyResult } from "../protocol/evidence-schema.ts";
import { checkReceipt } from "../auth/fetch-receipt.ts";
import { sha256OfText } from "./digest.ts";
import { findQuote } from "./find-quote.ts";

/** The keys a receipt is checked against, and the issuer it must name (null: any). */
export type ReceiptKeys = { jwks: { keys: JWK[] }; issuer: string | null };

export async function verifyEvidence(
  ask: VerifyAsk,
  keys: ReceiptKeys | null,
  anchorsOf: (markdown: string) => Promise<readonly Anchor[]>,
): Promise<VerifyResult> {
  if (ask.receipt === null) {
    return {
      verdict: "unsigned",
      reason: "no receipt was given: nothing ties this text to a fetch",
    };
  }
  if (keys === null) {
    return {
      verdict: "unsigned",
      reason:
        "this gateway holds no signing key (TRACEFETCH_SIGNING_JWK), so it can check no receipt",
    };
  }
  const checked = await checkReceipt(ask.receipt, keys.jwks, keys.issuer);
  if (!checked.ok) return { verdict: "signature_invalid", reason: checked.reason };
  const { claims } = checked;
  const digest = await sha256OfText(ask.markdown);
  if (digest !== claims.markdown_sha256) {
    return {
      verdict: "content_mismatch",
      reason:
        `the text's SHA-256 is ${digest}, the receipt's markdown_sha256 ${claims.markdown_sha256}: it is not the text the receipt covers`,
      claims,
    };
  }
  if (ask.quote === null) {
    return {
      verdict: "verified",
      reason: `signed by ${claims.iss}; the text is the one fetched from ${claims.final_url}`,
      claims,
    };
  }
  const found = findQuote(ask.markdown, ask.quote, await anchorsOf(ask.markdown));
  if (found === null) {
    return {
      verdict: "quote_not_found",
      reason:
        "the receipt and the text hold, but the quote is not in the text (white space and case folded)",
      claims,
    };
  }
  return {
    verdict: "verified",
    reason:
      `signed by ${claims.iss}; the text is the one fetched from ${claims.final_url}, and the quote is at lines ${found.line_start}-${found.line_end}`,
    claims,
    quote: found,
  };
}
