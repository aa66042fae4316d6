/**
 * `tracefetch crawl URL [--max-pages N] [--max-depth N] [--query TEXT]`: a bounded crawl of one
 * site (POST /v1/crawl), read as NDJSON as it happens. People get a line per page as it arrives
 * (its depth, final URL and title, and the best passage's first line with --query), then the
 * counts; --json prints one envelope whose result is the `done` event's counts. The pages'
 * evidence itself comes from the route's events (docs/envelope.md, "Crawling a site").
 */
import * as v from "valibot";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { EnvelopeSchema } from "../protocol/envelope-schema.ts";
import { parseCrawlRequestText } from "../protocol/crawl-request.ts";
import {
  type CrawlEvent,
  CrawlEventSchema,
  type CrawlResult,
} from "../protocol/crawl-event-schema.ts";
import { MAX_CRAWL_DURATION_MS } from "../protocol/crawl-limits.ts";
import { MAX_GATEWAY_ANSWER_BYTES } from "../protocol/limits.ts";
import { numberFromText } from "../protocol/search-request.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { concatBytes, decodeUtf8, readBounded } from "../io/bounded-reader.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { displayUrl, resolveTarget, unreachableHint } from "./resolve-target.ts";
import { requestProblemReply } from "./usage-reply.ts";

/** The crawl's longest run and a minute for the gateway around it (its slowest page's fetch). */
const GATEWAY_CRAWL_TIMEOUT_MS = MAX_CRAWL_DURATION_MS + 60_000;

export async function crawlCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("crawl", "crawl", args, ctx, {
    gateway: { type: "string" },
    "max-pages": { type: "string" },
    "max-depth": { type: "string" },
    query: { type: "string" },
  }, { one: { message: (n) => `crawl takes one URL (got ${n} argument(s))`, field: "url" } });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  const input: Record<string, unknown> = { url: positionals[0] };
  if (values["max-pages"] !== undefined) input.max_pages = numberFromText(values["max-pages"]);
  if (values["max-depth"] !== undefined) input.max_depth = numberFromText(values["max-depth"]);
  if (values.query !== undefined) input.query = values.query;
  const body = JSON.stringify(input);
  // Checked as the gateway would before anything is sent.
  const parsed = parseCrawlRequestText(body);
  if (!parsed.ok) return requestProblemReply("crawl", parsed.problem, ctx.requestId);
  const resolved = await resolveTarget(values.gateway, ctx.env);
  if (!resolved.ok) return requestProblemReply("crawl", resolved.problem, ctx.requestId);
  const { target } = resolved;
  const where = displayUrl(target.base);
  const headers: Record<string, string> = {
    accept: "application/x-ndjson, application/json",
    "content-type": "application/json",
    "x-request-id": ctx.requestId,
  };
  if (target.token !== null) headers.authorization = `Bearer ${target.token}`;
  const signal = AbortSignal.any([
    AbortSignal.timeout(GATEWAY_CRAWL_TIMEOUT_MS),
    ctx.interrupted(),
  ]);
  const fail = (code: "transport_error" | "bad_gateway_answer", message: string): Reply => ({
    kind: "envelope",
    envelope: buildEnvelope("crawl", code, ctx.requestId, { error: { message } }),
  });
  let res: Response;
  try {
    res = await ctx.fetch(new URL("v1/crawl", target.base), {
      method: "POST",
      headers,
      body,
      signal,
      redirect: "manual",
    });
  } catch {
    return fail(
      "transport_error",
      `could not reach the gateway at ${where}: ${unreachableHint(target.base, false)}`,
    );
  }
  const type = res.headers.get("content-type") ?? "";
  if (!res.ok || !/^application\/x-ndjson\b/i.test(type)) {
    const read = await readBounded(res.body, MAX_GATEWAY_ANSWER_BYTES, null).catch(() => null);
    const envelope = read?.ok ? envelopeOf(decodeUtf8(read.bytes)) : null;
    return envelope === null
      ? fail("bad_gateway_answer", `the gateway at ${where} answered HTTP ${res.status}`)
      : { kind: "envelope", envelope };
  }
  let done: Extract<CrawlEvent, { event: "done" }> | null = null;
  try {
    for await (const line of lines(res.body)) {
      const event = eventOf(line);
      if (event === null) {
        return fail(
          "bad_gateway_answer",
          `the gateway at ${where} streamed a line that is not a crawl event`,
        );
      }
      if (event.event === "done") done = event;
      if (event.event === "page" && !ctx.machine) ctx.writeStdout(`${pageLine(event)}\n`);
    }
  } catch {
    if (done === null) {
      return fail("transport_error", `the stream from ${where} broke before its done event`);
    }
  }
  if (done === null) {
    return fail("transport_error", `the stream from ${where} ended before its done event`);
  }
  const result: CrawlResult = { ended: done.ended, pages: done.pages, skipped: done.skipped };
  const envelope = buildEnvelope("crawl", done.code, done.request_id, {
    result,
    ...(done.message === undefined ? {} : { error: { message: done.message } }),
  });
  return {
    kind: "envelope",
    envelope,
    render: () => {
      const s = result.skipped;
      return `${result.pages} page(s), ended ${result.ended}; skipped: ${s.robots} robots, ${s.other_origin} other origin, ${s.type} type, ${s.limit} limit, ${s.failed} failed\n`;
    },
  };
}

/** One page as a line: its depth, where it led, its title, and its best passage's first line. */
function pageLine(event: Extract<CrawlEvent, { event: "page" }>): string {
  const { evidence } = event.result;
  const passage = evidence.passages?.[0]?.text.split("\n")[0];
  return [
    `[${event.depth}] ${evidence.final_url}`,
    evidence.title ?? "(untitled)",
    ...(passage === undefined ? [] : [passage.slice(0, 160)]),
  ].join("  ");
}

/** The stream's lines, each at most MAX_GATEWAY_ANSWER_BYTES. */
async function* lines(body: ReadableStream<Uint8Array> | null): AsyncGenerator<string> {
  if (body === null) return;
  let partial: Uint8Array[] = [];
  let held = 0;
  for await (const chunk of body) {
    let from = 0;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, from)) {
      partial.push(chunk.subarray(from, i));
      const text = decodeUtf8(concatBytes(partial));
      partial = [];
      held = 0;
      from = i + 1;
      if (text === null) throw new Error("a line is not UTF-8");
      if (text.trim() !== "") yield text;
    }
    held += chunk.byteLength - from;
    if (held > MAX_GATEWAY_ANSWER_BYTES) throw new Error("a line over the byte cap");
    partial.push(chunk.subarray(from));
  }
}

function eventOf(line: string): CrawlEvent | null {
  try {
    const parsed = v.safeParse(CrawlEventSchema, JSON.parse(line));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

function envelopeOf(text: string | null): Envelope | null {
  if (text === null) return null;
  try {
    const parsed = v.safeParse(EnvelopeSchema, JSON.parse(text));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}
