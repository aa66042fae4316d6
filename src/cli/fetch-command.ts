/**
 * `tracefetch fetch URL [--format text] [--max-chars N] [--max-age-seconds N] [--timeout-ms N]
 * [--out DIR]`: a page as evidence (POST /v1/fetch). People see the title, where it came from and
 * the start of the text; --json prints the envelope. --out DIR asks the gateway for the raw body
 * too (`include_raw`) and writes the bundle `tracefetch verify DIR` checks offline, with the
 * gateway's JWK Set fetched once beside it (evidence-bundle.ts).
 */
import type { JWK } from "jose";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { evidenceText, type FetchResult } from "../protocol/evidence-schema.ts";
import { parseFetchRequest } from "../protocol/fetch-request.ts";
import { numberFromText } from "../protocol/search-request.ts";
import {
  FETCH_PREVIEW_CHARS,
  GATEWAY_FETCH_TIMEOUT_MS,
} from "../protocol/evidence-route-limits.ts";
import { GATEWAY_STATUS_TIMEOUT_MS, MAX_GATEWAY_ANSWER_BYTES } from "../protocol/limits.ts";
import { readBounded } from "../io/bounded-reader.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { displayUrl, resolveTarget, type Target, unreachableHint } from "./resolve-target.ts";
import { requestProblemReply } from "./usage-reply.ts";
import { writeBundle } from "./evidence-bundle.ts";

export async function fetchCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("fetch", "fetch", args, ctx, {
    gateway: { type: "string" },
    out: { type: "string" },
    format: { type: "string" },
    "max-chars": { type: "string" },
    "max-age-seconds": { type: "string" },
    "timeout-ms": { type: "string" },
  }, { one: { message: (n) => `fetch takes one URL (got ${n} argument(s))`, field: "url" } });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  const input: Record<string, unknown> = { url: positionals[0] };
  if (values.format !== undefined) input.format = values.format;
  for (
    const [flag, field] of [
      ["max-chars", "max_chars"],
      ["max-age-seconds", "max_age_seconds"],
      ["timeout-ms", "timeout_ms"],
    ] as const
  ) {
    const given = values[flag];
    if (given !== undefined) input[field] = numberFromText(given);
  }
  if (values.out !== undefined) input.include_raw = true;
  // Checked as the gateway would before anything is sent.
  const parsed = parseFetchRequest(input);
  if (!parsed.ok) return requestProblemReply("fetch", parsed.problem, ctx.requestId);
  const target = await resolveTarget(values.gateway, ctx.env);
  if (!target.ok) return requestProblemReply("fetch", target.problem, ctx.requestId);
  const envelope = await callGateway({
    command: "fetch",
    target: target.target,
    route: "v1/fetch",
    body: JSON.stringify(input),
    timeoutMs: GATEWAY_FETCH_TIMEOUT_MS,
    requestId: ctx.requestId,
    fetch: ctx.fetch,
    unreachable: unreachableHint(target.target.base, false),
  });
  const result = fetchResultOf(envelope);
  if (values.out !== undefined && result !== null) {
    const jwks = result.receipt === null ? null : await gatewayJwks(target.target, ctx.fetch);
    const written = await writeBundle(values.out, result, jwks, displayUrl(target.target.base));
    ctx.writeStderr(`wrote ${written.join(", ")} to ${values.out}\n`);
    if (result.receipt !== null && jwks === null) {
      ctx.writeStderr(
        "the gateway's /.well-known/jwks.json could not be read: verify this bundle with --jwks FILE\n",
      );
    }
  }
  return { kind: "envelope", envelope, render: (paint) => renderFetch(envelope, paint) };
}

function fetchResultOf(envelope: Envelope): FetchResult | null {
  const result = envelope.result;
  return result !== undefined && "receipt" in result ? result : null;
}

/** The gateway's published keys, once, for the bundle; null when they cannot be read. */
async function gatewayJwks(
  target: Target,
  fetchImpl: typeof fetch,
): Promise<{ keys: JWK[] } | null> {
  try {
    const res = await fetchImpl(new URL(".well-known/jwks.json", target.base), {
      signal: AbortSignal.timeout(GATEWAY_STATUS_TIMEOUT_MS),
      redirect: "manual",
    });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    const read = await readBounded(res.body, MAX_GATEWAY_ANSWER_BYTES, null);
    if (!read.ok) return null;
    const value = JSON.parse(new TextDecoder().decode(read.bytes));
    return Array.isArray(value?.keys) ? value : null;
  } catch {
    return null;
  }
}

export function renderFetch(envelope: Envelope, paint: Paint): string {
  const result = fetchResultOf(envelope);
  if (result === null) return "";
  const { evidence } = result;
  const chars = Array.from(evidenceText(evidence));
  const rest = chars.length - FETCH_PREVIEW_CHARS;
  return [
    paint.bold(evidence.title ?? evidence.final_url),
    `${evidence.final_url} (${evidence.status_code}, ${evidence.content_type}, ${evidence.route}, fetched ${evidence.fetched_at}${
      result.cached ? `, cached ${result.age_ms ?? 0} ms ago` : ""
    })`,
    `markdown_sha256 ${evidence.markdown_sha256}; ${
      result.receipt === null ? "no receipt" : "receipt signed by the gateway"
    }`,
    ...result.warnings.map((w) => paint.dim(`warning: ${w}`)),
    "",
    chars.slice(0, FETCH_PREVIEW_CHARS).join(""),
    ...(rest > 0
      ? ["", paint.dim(`... ${rest} more characters; --json or --out keep them all`)]
      : []),
    "",
  ].join("\n");
}
