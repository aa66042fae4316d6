/**
 * Node only: the provider exchange port (src/io/provider-exchange.ts) as
 * one handler of undici's dispatcher, with no Response, Headers, Web stream or Node stream in
 * between: `request()` wraps every exchange in an async resource and a body stream, which cost more
 * than the rest of the client (the bench's profile). It keeps what the transport relies on:
 *
 * - a redirect is returned, never followed (the dispatcher follows none);
 * - the body is decompressed (gzip, deflate, br) as it arrives, so the cap counts decoded bytes;
 * - the exchange is aborted (its socket destroyed) at the cap, when the search's budget runs out,
 *   on cancel, or when the signal fires, and every failure rejects with undici's own error (a
 *   decoder's marked UNDECODABLE_BODY), which the transport classifies as it classified request()'s.
 *
 * It never pauses undici's parser: undici asserts (and the process would end) when a provider
 * closes its socket on a parser paused at the end of its last chunk. Bytes that arrive before the
 * body is asked for (the transport asks within the same turn) are held up to the largest cap, and
 * compressed bytes the decoder has not caught up with up to twice it, past which no decoded body
 * can fit under the cap either.
 */
import type { Agent, Dispatcher } from "undici";
import { MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import type { ByteBudget } from "../io/byte-budget.ts";
import type { BoundedRead, EnoughRead } from "../io/bounded-reader.ts";
import type { ProviderAnswer, ProviderExchange } from "../io/provider-exchange.ts";
import { Collector, Decoder, MAX_UNDECODED_BYTES } from "./node-body.ts";

/** Statuses whose answer may not carry a body (Fetch standard, "null body status"). */
export const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** What a bodiless answer may still send before its connection is given up (undici's dump). */
const DUMP_LIMIT_BYTES = 128 * 1024;

/** Endpoints parsed once: a manifest names few, and a URL costs more than the lookup. */
const MAX_TARGETS = 1024;

/** A header name as Headers keeps it: a token, in lower case. */
const PLAIN_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
/**
 * A value Headers keeps as it is: visible ASCII or Latin-1 at both ends, spaces and tabs only
 * between (RFC 9110's field-content). Anything else goes through Headers, which checks it.
 */
const PLAIN_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/**
 * Request headers as fetch would send them (names and values checked by Headers), gzip asked. A
 * record Headers would hand back as it is (lower-case token names, plain values) skips it: a
 * Headers object built and read back cost about 10 µs an attempt; anything else goes through it.
 */
export function requestHeaders(init: HeadersInit | undefined): Record<string, string> {
  if (init !== undefined && isPlainRecord(init)) {
    const out: Record<string, string> = {};
    for (const name in init) out[name] = init[name] as string;
    if (!("accept-encoding" in out)) out["accept-encoding"] = "gzip, deflate, br";
    return out;
  }
  const headers = new Headers(init);
  if (!headers.has("accept-encoding")) headers.set("accept-encoding", "gzip, deflate, br");
  return Object.fromEntries(headers);
}

function isPlainRecord(init: HeadersInit): init is Record<string, string> {
  if (Array.isArray(init) || init instanceof Headers) return false;
  if (Object.getPrototypeOf(init) !== Object.prototype) return false;
  for (const name in init) {
    if (!Object.hasOwn(init, name) || name === "__proto__") return false;
    const value = (init as Record<string, unknown>)[name];
    if (typeof value !== "string" || !PLAIN_NAME.test(name) || !PLAIN_VALUE.test(value)) {
      return false;
    }
  }
  return true;
}

export function nodeExchange(agent: Agent): ProviderExchange {
  const targets = new Map<string, { origin: string; path: string }>();
  return (url, init) =>
    new Promise((resolve, reject) => {
      const { signal } = init;
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      let target = targets.get(url);
      if (target === undefined) {
        const parsed = new URL(url);
        target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
        if (targets.size >= MAX_TARGETS) targets.clear();
        targets.set(url, target);
      }
      agent.dispatch({
        origin: target.origin,
        path: target.path,
        method: "POST",
        headers: requestHeaders(init.headers),
        body: init.body,
      }, new Exchange(signal, resolve, reject));
    });
}

/**
 * One exchange, as a handler of undici's dispatcher (onRequestStart, onResponseStart,
 * onResponseData, onResponseEnd, onResponseError), aborted through the controller it is handed;
 * it never calls the controller's pause(). Its parts are objects with methods rather than
 * closures: under tsx every named closure made per call pays for a `name` property being defined
 * on it.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly #signal: AbortSignal;
  #answered: ((answer: ProviderAnswer) => void) | null;
  #refused: ((error: unknown) => void) | null;
  #controller: Dispatcher.DispatchController | null = null;
  #body: Body | null = null;

  constructor(
    signal: AbortSignal,
    answered: (answer: ProviderAnswer) => void,
    refused: (error: unknown) => void,
  ) {
    this.#signal = signal;
    this.#answered = answered;
    this.#refused = refused;
    signal.addEventListener("abort", this);
  }

  /** The signal fired: the exchange is aborted with its reason. */
  handleEvent(): void {
    this.#controller?.abort(this.#signal.reason);
  }

  /** Destroys the exchange's socket: nothing more is read. */
  stop(): void {
    this.#controller?.abort(new Error("the provider's body was given up"));
  }

  /** Undici may call it again, with a new controller, when it retries the request. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#signal.aborted) controller.abort(this.#signal.reason);
  }

  /** Headers arrive parsed: lower-case names, an array for a repeated one. */
  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: ParsedHeaders,
  ): void {
    // An interim answer (1xx) is followed by the final one, as request() waits for it.
    if (status < 200) return;
    const encoding = headerOf(headers, "content-encoding");
    const body = new Body(NULL_BODY.has(status), encoding, this);
    this.#body = body;
    const answered = this.#answered;
    this.#answered = null;
    this.#refused = null;
    answered?.(new Answer(status, headers, body));
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body?.data(chunk);
  }

  onResponseEnd(): void {
    this.#signal.removeEventListener("abort", this);
    this.#body?.complete();
  }

  /** Also called, without a controller, when undici refuses the request before it starts. */
  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.#signal.removeEventListener("abort", this);
    const refused = this.#refused;
    this.#answered = null;
    this.#refused = null;
    if (refused !== null) refused(error);
    else this.#body?.failed(error);
  }
}

type ParsedHeaders = Record<string, string | string[] | undefined>;

/** A header's value as Headers would give it: several joined by ", ", no outer whitespace. */
function headerOf(headers: ParsedHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return trimHttpWhitespace(Array.isArray(value) ? value.join(", ") : value);
}

class Answer implements ProviderAnswer {
  readonly opaqueRedirect = false;

  constructor(
    readonly status: number,
    private readonly headers: ParsedHeaders,
    private readonly body: Body,
  ) {}

  header(name: string): string | null {
    return headerOf(this.headers, name);
  }

  read(cap: number, budget: ByteBudget | null, enough?: EnoughRead): Promise<BoundedRead> {
    return this.body.read(cap, budget, enough);
  }

  cancel(): Promise<void> {
    this.body.giveUp();
    return Promise.resolve();
  }
}

/**
 * An answer's body: bytes held until it is read, then collected within the cap and the search's
 * budget (decoded first when it is compressed). At either bound it settles with the bounded
 * reader's refusal, never a truncated body, and the exchange is aborted.
 */
class Body {
  readonly #bodiless: boolean;
  readonly #encoding: string | null;
  readonly #exchange: { stop(): void };
  #held: Buffer[] = [];
  #heldBytes = 0;
  #complete = false;
  #failure: unknown = null;
  /** Set once the body is settled or given up: what still arrives is undici winding down. */
  #over = false;
  #collector: Collector | null = null;
  #decoder: Decoder | null = null;

  constructor(bodiless: boolean, encoding: string | null, exchange: { stop(): void }) {
    this.#bodiless = bodiless;
    this.#encoding = bodiless ? null : encoding;
    this.#exchange = exchange;
  }

  data(chunk: Buffer): void {
    if (this.#over) return;
    if (this.#bodiless) {
      // Dropped, but a bodiless answer that goes on sending loses its connection.
      this.#heldBytes += chunk.length;
      if (this.#heldBytes > DUMP_LIMIT_BYTES) this.giveUp();
      return;
    }
    if (this.#decoder !== null) this.#decoder.write(chunk);
    else if (this.#collector !== null) this.#collector.write(chunk);
    else {
      this.#held.push(chunk);
      this.#heldBytes += chunk.length;
      const limit = this.#encoding === null ? MAX_PROVIDER_BODY_BYTES : MAX_UNDECODED_BYTES;
      if (this.#heldBytes > limit) {
        this.#failure = { ok: false, reason: "too_large", read: this.#heldBytes };
        this.#end();
      }
    }
  }

  complete(): void {
    this.#complete = true;
    if (this.#over) return;
    if (this.#decoder !== null) this.#decoder.end();
    else this.#collector?.end();
  }

  failed(error: unknown): void {
    if (this.#over) return;
    if (this.#collector !== null) this.#collector.fail(error);
    else this.#failure = error;
  }

  read(cap: number, budget: ByteBudget | null, enough?: EnoughRead): Promise<BoundedRead> {
    if (this.#bodiless) return Promise.resolve({ ok: true, bytes: new Uint8Array(0) });
    return new Promise((resolve, reject) => {
      if (this.#collector !== null || (this.#over && this.#failure === null)) {
        reject(new TypeError("the body was already read or given up"));
        return;
      }
      const failure = this.#failure;
      if (failure !== null) {
        this.#over = true;
        if (isTooLarge(failure)) resolve(failure);
        else reject(failure);
        return;
      }
      const collector = new Collector(cap, budget, (result) => {
        // A read that had enough before the body ended gives the rest up, as a refused one does.
        if (!result.ok || !this.#complete) this.#end();
        else this.#over = true;
        resolve(result);
      }, (error) => {
        this.#end();
        reject(error);
      }, enough);
      this.#collector = collector;
      if (this.#encoding !== null) {
        this.#decoder = new Decoder(this.#encoding, collector, () => {
          collector.settle({ ok: false, reason: "too_large", read: collector.read });
        });
      }
      const held = this.#held;
      this.#held = [];
      for (const chunk of held) {
        if (this.#over) return;
        this.data(chunk);
      }
      if (this.#complete && !this.#over) this.complete();
    });
  }

  giveUp(): void {
    if (this.#over) return;
    this.#held = [];
    this.#end();
  }

  /** Destroys the exchange's socket, so nothing more is read, and frees any decoder. */
  #end(): void {
    this.#over = true;
    this.#decoder?.close();
    if (!this.#complete) this.#exchange.stop();
  }
}

function isTooLarge(value: unknown): value is BoundedRead {
  return typeof value === "object" && value !== null &&
    (value as { reason?: unknown }).reason === "too_large";
}

/** Header values as Headers keeps them: without leading or trailing HTTP whitespace. */
function trimHttpWhitespace(value: string): string {
  return /^[ \t\r\n]|[ \t\r\n]$/.test(value)
    ? value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "")
    : value;
}
