/**
 * What the built-ins that call a third-party API share: one request with no redirects, a bounded
 * strictly decoded body, a schema check, and failures thrown as ProviderError so the in-process
 * transport reports them with a code (design 3.4) instead of as an empty success.
 */
import * as v from "valibot";
import { MAX_PROVIDER_BODY_BYTES } from "../../protocol/limits.ts";
import { decodeUtf8, readBounded } from "../bounded-reader.ts";
import { classifyThrown } from "../classify.ts";
import { JSON_CONTENT_TYPE, MAX_ERROR_BODY_BYTES } from "../http-provider.ts";
import { ProviderError } from "../provider-client.ts";
import { redact } from "../redact.ts";

/** How much of an upstream error message we quote: enough for "Bad credentials", not a page. */
const MAX_QUOTED_MESSAGE_CHARS = 160;

/**
 * Sends one request. A failure before any response becomes `adapter_unavailable` with the error's
 * code only: the network error's own text names the host and port, which callers never see.
 * Deadlines and cancellation are rethrown untouched so the transport reports them as such.
 */
export async function send(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit & { signal: AbortSignal },
): Promise<Response> {
  try {
    return await fetchImpl(url, { ...init, redirect: "manual" });
  } catch (error) {
    throw asProviderError(error, "connect", init.signal);
  }
}

/** Reads a 2xx answer as JSON and checks it against `schema`; anything else fails the search. */
export async function readAnswer<S extends v.GenericSchema>(
  label: string,
  response: Response,
  schema: S,
  signal: AbortSignal,
): Promise<v.InferOutput<S>> {
  const type = response.headers.get("content-type") ?? "";
  if (!JSON_CONTENT_TYPE.test(type)) {
    await discard(response);
    throw new ProviderError(
      "search_failed",
      `${label} answered content-type "${type.slice(0, 80)}", not JSON`,
      undefined,
      false,
    );
  }
  const text = await readText(label, response, MAX_PROVIDER_BODY_BYTES, signal);
  const json = parseJson(text);
  if (json === undefined) {
    throw new ProviderError(
      "search_failed",
      `${label} answered a body that is not JSON`,
      undefined,
      false,
    );
  }
  const parsed = v.safeParse(schema, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const at = issue?.path?.map((p) => String(p.key)).join(".") || "body";
    const what = issue?.received === "undefined" ? "is missing" : `is invalid (${issue?.message})`;
    // The same request would get the same malformed answer: not worth retrying.
    throw new ProviderError(
      "search_failed",
      `${label} answered an unexpected shape: ${at} ${what}`,
      undefined,
      false,
    );
  }
  return parsed.output;
}

/** A non-2xx answer's body, read up to the error cap; null when it is absent or unreadable. */
export async function readErrorBody(
  response: Response,
  signal: AbortSignal,
): Promise<unknown> {
  try {
    return parseJson(await readText("", response, MAX_ERROR_BODY_BYTES, signal)) ?? null;
  } catch (error) {
    if (signal.aborted) throw error;
    return null;
  }
}

/** A redirect is never followed: the built-in calls only its configured base URL. */
export async function refuseRedirect(label: string, response: Response): Promise<void> {
  if (response.type !== "opaqueredirect" && (response.status < 300 || response.status >= 400)) {
    return;
  }
  await discard(response);
  throw new ProviderError(
    "search_failed",
    `${label} answered a redirect (HTTP ${response.status}), which is never followed`,
  );
}

/** A short, redacted quote of an upstream error message, or "" when there is none. */
export function quote(message: unknown): string {
  if (typeof message !== "string" || message.trim() === "") return "";
  return `: ${redact(message, MAX_QUOTED_MESSAGE_CHARS)}`;
}

/** The number a header holds, or null when it is absent or not a non-negative number. */
export function numberHeader(response: Response, name: string): number | null {
  const raw = response.headers.get(name)?.trim();
  if (raw === undefined || !/^\d+(?:\.\d+)?$/.test(raw)) return null;
  return Number(raw);
}

async function readText(
  label: string,
  response: Response,
  cap: number,
  signal: AbortSignal,
): Promise<string> {
  let read;
  try {
    // Built-ins are not handed the search's byte budget; the per-answer cap still bounds them.
    read = await readBounded(response.body, cap, null);
  } catch (error) {
    throw asProviderError(error, "body", signal);
  }
  if (!read.ok) {
    throw new ProviderError(
      "search_failed",
      `${label} answered more than ${cap} decoded bytes; the body was cancelled`,
    );
  }
  const text = decodeUtf8(read.bytes);
  if (text === null) throw new ProviderError("search_failed", `${label} answered invalid UTF-8`);
  return text;
}

function asProviderError(error: unknown, phase: "connect" | "body", signal: AbortSignal): unknown {
  const failure = classifyThrown(error, phase, signal);
  if (failure.outcome === "timeout" || failure.outcome === "cancelled") return error;
  return new ProviderError(
    failure.outcome === "adapter_unavailable" ? "adapter_unavailable" : "search_failed",
    failure.message,
  );
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
