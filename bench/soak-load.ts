/**
 * The soak's load: searches due at a fixed rate (open loop: a slow gateway gets the same arrivals),
 * at most CLIENT_MAX_INFLIGHT open at once, mixing GET and POST searches over random provider
 * subsets and scopes, NDJSON streams read to the end, callers that leave mid-search, status reads,
 * a few clients that send headers and a few bytes of body and then stall, expands (of a locator a
 * search returned, of one no search did, and of a provider that implements no expand), refreshes
 * (without a token, with one lacking `tracefetch-admin`, with one granting it), MCP clients
 * (initialize, then tools/call search, now and then with a progress token) and bodies to `/mcp`
 * that are not what MCP expects.
 *
 * Every request has a deadline (its timeout_ms plus HUNG_GRACE_MS; the body deadline plus grace
 * for a stalled body): an answer not complete by then is "hung". Every answer is judged by
 * soak-checks.ts and counted by code.
 */
import { connect } from "node:net";
import { Agent, fetch } from "undici";
import {
  checkEnvelope,
  checkMcp,
  checkStream,
  parseRawAnswer,
  type Verdict,
} from "./soak-checks.ts";
import {
  ACTION_PROVIDER,
  CLIENT_MAX_INFLIGHT,
  HUNG_GRACE_MS,
  MAX_PROVIDER_TIMEOUT_MS,
  MAX_SLOW_BODY_CLIENTS,
  MAX_TIMEOUT_MS,
  MIN_TIMEOUT_MS,
  QUERY_WORDS,
  SOAK_PROVIDERS,
  SOAK_SCOPES,
} from "./soak-setup.ts";

export const KINDS = [
  "get",
  "post",
  "stream",
  "abort",
  "status",
  "slow-body",
  "expand",
  "refresh",
  "mcp",
  "mcp-garbage",
] as const;
export type Kind = (typeof KINDS)[number];

/** Share of the requests due that are of each kind (a slow body over its cap becomes a GET). */
const MIX: ReadonlyArray<readonly [Kind, number]> = [
  ["get", 0.30],
  ["post", 0.18],
  ["stream", 0.18],
  ["abort", 0.14],
  ["status", 0.02],
  ["slow-body", 0.02],
  ["expand", 0.06],
  ["refresh", 0.03],
  ["mcp", 0.05],
  ["mcp-garbage", 0.02],
];

/** What an MCP client sends first. */
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "tracefetch-soak", version: "1.0.0" },
  },
});
/** The headers every MCP request carries (docs/mcp.md). */
const MCP_HEADERS = { accept: "application/json, text/event-stream" };

/**
 * Bodies and headers MCP does not expect: not JSON, an empty batch, no JSON-RPC, an unknown tool,
 * arguments that are no object, an unknown method, a notification (202), a batch, the wrong
 * Accept, content type or protocol version, bytes that are not UTF-8.
 */
const MCP_GARBAGE: ReadonlyArray<{ body: string | Uint8Array; headers?: Record<string, string> }> =
  [
    { body: "{not json" },
    { body: "[]" },
    { body: '{"foo":1}' },
    { body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crawl"}}' },
    {
      body:
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":[]}}',
    },
    {
      body:
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"retry","__proto__":{"limit":1}}}}',
    },
    { body: '{"jsonrpc":"2.0","id":1,"method":"resources/list"}' },
    { body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' },
    {
      body:
        '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status"}}]',
    },
    { body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers: { accept: "text/html" } },
    { body: INITIALIZE, headers: { "content-type": "text/plain" } },
    {
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      headers: { "mcp-protocol-version": "1999-01-01" },
    },
    { body: new Uint8Array([0x7b, 0xff, 0x7d]) },
  ];

/** Counters outside the envelope codes. */
export const CLIENT_ABORTED = "client_aborted";
export const SLOW_BODY_CLOSED = "slow_body_closed";
export const HUNG = "hung";
export const UNCLASSIFIED = "unclassified";

type Outcome =
  | Verdict
  | { ok: true; code: typeof CLIENT_ABORTED | typeof SLOW_BODY_CLOSED };

export type Example = { kind: Kind; what: string; detail: string };

const MAX_EXAMPLES = 10;

export class Tally {
  due = 0;
  started = 0;
  saturated = 0;
  /** Requests finished (answered, aborted, closed, hung or failed). */
  done = 0;
  readonly codes = new Map<string, number>();
  readonly unclassified = new Map<string, number>();
  readonly examples: Example[] = [];
  readonly byKind = new Map<Kind, { started: number; ms: number[] }>(
    KINDS.map((k) => [k, { started: 0, ms: [] }]),
  );
  /** Answers by code for each kind. */
  readonly kindCodes = new Map<Kind, Map<string, number>>(KINDS.map((k) => [k, new Map()]));
  /** Slowest 408 a stalled body got, in ms. */
  slowestRequestTimeout = 0;

  count(code: string, kind?: Kind): void {
    this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
    const codes = kind === undefined ? undefined : this.kindCodes.get(kind);
    codes?.set(code, (codes.get(code) ?? 0) + 1);
  }

  failure(kind: Kind, counter: string, reason: string, detail: string): void {
    this.count(counter, kind);
    if (counter === UNCLASSIFIED) {
      this.unclassified.set(reason, (this.unclassified.get(reason) ?? 0) + 1);
    }
    if (this.examples.length < MAX_EXAMPLES) {
      this.examples.push({ kind, what: `${counter}: ${reason}`, detail });
    }
  }
}

/** What a request sends besides its URL. */
type SendInit = { method?: string; body?: string | Uint8Array; headers?: Record<string, string> };

type SearchShape = {
  query: string;
  providers?: string[];
  scope?: string;
  limit: number;
  timeout_ms: number;
  view?: "merged";
};

const WORDS = QUERY_WORDS;

/** Locators of the action provider that searches returned, for expands: at most this many. */
const MAX_RETURNED = 256;

export type LoadOptions = {
  url: string;
  port: number;
  rate: number;
  random: () => number;
  tally: Tally;
  /** A stalled body's 408 is due by this (the gateway's body deadline). */
  bodyDeadlineMs: number;
  /** Bearer tokens: one granting `tracefetch-admin`, one valid without it. */
  tokens: { admin: string; reader: string };
};

export class Load {
  inflight = 0;
  private slowBodies = 0;
  /** Locators of ACTION_PROVIDER that search answers carried (merged entries it found). */
  private readonly returned: string[] = [];
  private mcpIds = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly agent = new Agent({
    connections: CLIENT_MAX_INFLIGHT,
    keepAliveTimeout: 4_000,
  });
  private readonly random: () => number;
  private readonly tally: Tally;

  constructor(private readonly o: LoadOptions) {
    this.random = o.random;
    this.tally = o.tally;
  }

  /** Starts issuing requests at the fixed rate. */
  start(): void {
    const t0 = performance.now();
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - t0) / 1000) * this.o.rate);
      while (this.tally.due < due) {
        this.tally.due++;
        if (this.inflight >= CLIENT_MAX_INFLIGHT) {
          this.tally.saturated++;
          continue;
        }
        this.launch(this.pickKind());
      }
    }, 10);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Waits until every open request has ended, or `maxMs`; true when none is left. */
  async drain(maxMs: number): Promise<boolean> {
    const until = performance.now() + maxMs;
    while (this.inflight > 0 && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.inflight === 0;
  }

  /** Closes the client's keep-alive connections. */
  async close(): Promise<void> {
    await this.agent.destroy();
  }

  private pickKind(): Kind {
    let r = this.random();
    for (const [kind, share] of MIX) {
      if (r < share) {
        return kind === "slow-body" && this.slowBodies >= MAX_SLOW_BODY_CLIENTS ? "get" : kind;
      }
      r -= share;
    }
    return "get";
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  private search(): SearchShape {
    const words = Array.from(
      { length: this.int(1, 4) },
      () => WORDS[this.int(0, WORDS.length - 1)],
    );
    const shape: SearchShape = {
      query: words.join(" "),
      limit: this.int(1, 20),
      timeout_ms: this.int(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS),
    };
    const pick = this.random();
    if (pick < 0.55) {
      const names = SOAK_PROVIDERS.map((p) => p.name).filter(() => this.random() < 0.35);
      shape.providers = names.length > 0
        ? names
        : [SOAK_PROVIDERS[this.int(0, SOAK_PROVIDERS.length - 1)]?.name as string];
    } else if (pick < 0.85) {
      shape.scope = SOAK_SCOPES[this.int(0, SOAK_SCOPES.length - 1)] as string;
    }
    if (this.random() < 0.2) shape.view = "merged";
    return shape;
  }

  private getUrl(s: SearchShape, stream = false): string {
    const params = [`q=${encodeURIComponent(s.query)}`];
    if (s.providers) params.push(`providers=${s.providers.join(",")}`);
    if (s.scope) params.push(`scope=${s.scope}`);
    params.push(`limit=${s.limit}`, `timeout_ms=${s.timeout_ms}`);
    if (s.view) params.push(`view=${s.view}`);
    if (stream) params.push("stream=ndjson");
    return `${this.o.url}/v1/search?${params.join("&")}`;
  }

  /**
   * Runs one request under its hung deadline. `run` gets a signal that fires at the deadline, so a
   * hung request's connection is given up rather than left open.
   */
  private track(
    kind: Kind,
    deadlineMs: number,
    what: string,
    run: (signal: AbortSignal) => Promise<Outcome>,
  ): void {
    const tally = this.tally;
    const stats = tally.byKind.get(kind);
    if (stats) stats.started++;
    tally.started++;
    this.inflight++;
    const started = performance.now();
    const deadline = new AbortController();
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      tally.done++;
      tally.failure(kind, HUNG, `no complete answer within ${deadlineMs} ms`, what);
      deadline.abort();
    }, deadlineMs);
    run(deadline.signal)
      .catch((error: unknown): Outcome => ({ ok: false, reason: `no answer: ${errorName(error)}` }))
      .then((outcome) => {
        if (hung) return;
        clearTimeout(timer);
        tally.done++;
        if (outcome.ok) {
          tally.count(outcome.code, kind);
          if (outcome.code !== CLIENT_ABORTED && outcome.code !== SLOW_BODY_CLOSED) {
            stats?.ms.push(performance.now() - started);
          }
        } else {
          tally.failure(kind, UNCLASSIFIED, outcome.reason, what);
        }
      })
      .finally(() => this.inflight--);
  }

  private launch(kind: Kind): void {
    const s = this.search();
    const deadline = s.timeout_ms + HUNG_GRACE_MS;
    switch (kind) {
      case "get": {
        const url = this.getUrl(s);
        this.track(kind, deadline, `GET ${url}`, (signal) => this.whole(url, {}, signal, true));
        return;
      }
      case "post": {
        const body = JSON.stringify(s);
        this.track(
          kind,
          deadline,
          `POST ${body}`,
          (signal) => this.whole(`${this.o.url}/v1/search`, { method: "POST", body }, signal, true),
        );
        return;
      }
      case "expand": {
        const body = JSON.stringify(this.expandAsk());
        this.track(
          kind,
          MAX_PROVIDER_TIMEOUT_MS + HUNG_GRACE_MS,
          `POST /v1/expand ${body}`,
          (signal) => this.whole(`${this.o.url}/v1/expand`, { method: "POST", body }, signal),
        );
        return;
      }
      case "refresh": {
        const r = this.random();
        // Without a token (401), with one lacking tracefetch-admin (403), with one granting it: of
        // the provider that refreshes, or now and then of one that does not.
        const token = r < 0.4 ? null : r < 0.5 ? this.o.tokens.reader : this.o.tokens.admin;
        const provider = r < 0.9 ? ACTION_PROVIDER : this.otherProvider();
        const body = JSON.stringify({ provider });
        const headers: Record<string, string> = token === null
          ? {}
          : { authorization: `Bearer ${token}` };
        const who = token === null
          ? "no token"
          : token === this.o.tokens.admin
          ? "admin"
          : "reader";
        this.track(
          kind,
          MAX_PROVIDER_TIMEOUT_MS + HUNG_GRACE_MS,
          `POST /v1/refresh ${body} (${who})`,
          (signal) =>
            this.whole(`${this.o.url}/v1/refresh`, { method: "POST", body, headers }, signal),
        );
        return;
      }
      case "mcp": {
        const progress = this.random() < 0.25;
        const call = JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: {
            name: "search",
            arguments: s,
            ...(progress ? { _meta: { progressToken: `p${++this.mcpIds}` } } : {}),
          },
        });
        this.track(
          kind,
          deadline,
          `POST /mcp initialize, then ${call}`,
          (signal) => this.mcpSearch(call, signal),
        );
        return;
      }
      case "mcp-garbage": {
        const garbage = MCP_GARBAGE[this.int(0, MCP_GARBAGE.length - 1)] as (typeof MCP_GARBAGE)[0];
        const shown = typeof garbage.body === "string"
          ? garbage.body
          : `bytes ${[...garbage.body].join(" ")}`;
        this.track(
          kind,
          HUNG_GRACE_MS * 2,
          `POST /mcp ${shown} ${JSON.stringify(garbage.headers ?? {})}`,
          (signal) =>
            this.mcp(
              {
                method: "POST",
                body: garbage.body,
                headers: { ...MCP_HEADERS, ...garbage.headers },
              },
              signal,
            ),
        );
        return;
      }
      case "stream": {
        const form = this.random();
        const ndjson = { accept: "application/x-ndjson" };
        if (form < 0.5) {
          const url = this.getUrl(s);
          this.track(
            kind,
            deadline,
            `GET (accept ndjson) ${url}`,
            (signal) => this.streamed(url, { headers: ndjson }, signal),
          );
        } else if (form < 0.75) {
          const url = this.getUrl(s, true);
          this.track(kind, deadline, `GET ${url}`, (signal) => this.streamed(url, {}, signal));
        } else {
          const body = JSON.stringify(s);
          this.track(
            kind,
            deadline,
            `POST (accept ndjson) ${body}`,
            (signal) =>
              this.streamed(
                `${this.o.url}/v1/search`,
                { method: "POST", body, headers: ndjson },
                signal,
              ),
          );
        }
        return;
      }
      case "abort": {
        const leaveAfter = this.int(10, 300);
        const post = this.random() < 0.5;
        const body = JSON.stringify(s);
        const url = post ? `${this.o.url}/v1/search` : this.getUrl(s);
        this.track(
          kind,
          deadline,
          `${post ? `POST ${body}` : `GET ${url}`} (leaves after ${leaveAfter} ms)`,
          (signal) => {
            const leave = new AbortController();
            const timer = setTimeout(() => leave.abort(), leaveAfter);
            const both = AbortSignal.any([signal, leave.signal]);
            return this.whole(url, post ? { method: "POST", body } : {}, both)
              .catch((error: unknown): Outcome => {
                if (leave.signal.aborted && !signal.aborted) {
                  return { ok: true, code: CLIENT_ABORTED };
                }
                throw error;
              })
              .finally(() => clearTimeout(timer));
          },
        );
        return;
      }
      case "status": {
        const url = `${this.o.url}/v1/status`;
        this.track(kind, HUNG_GRACE_MS * 2, `GET ${url}`, (signal) => this.whole(url, {}, signal));
        return;
      }
      case "slow-body": {
        const wait = this.random() < 0.5;
        const closeAfter = this.int(1_000, 5_000);
        this.slowBodies++;
        this.track(
          kind,
          this.o.bodyDeadlineMs + HUNG_GRACE_MS,
          wait
            ? "stalled body, waiting for the 408"
            : `stalled body, closed after ${closeAfter} ms`,
          (signal) => this.stalledBody(wait ? null : closeAfter, signal),
        );
        return;
      }
    }
  }

  private send(url: string, init: SendInit, signal: AbortSignal) {
    return fetch(url, {
      method: init.method ?? "GET",
      headers: {
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: init.body }),
      signal,
      dispatcher: this.agent,
    });
  }

  /**
   * A whole answer, judged as an envelope. A search's (`search` true) merged entries found by
   * ACTION_PROVIDER give the expands their locators.
   */
  private async whole(
    url: string,
    init: SendInit,
    signal: AbortSignal,
    search = false,
  ): Promise<Outcome> {
    const res = await this.send(url, init, signal);
    const text = await res.text();
    const verdict = checkEnvelope(res.status, text);
    if (search && verdict.ok && res.status === 200) this.keepLocators(text);
    return verdict;
  }

  private keepLocators(text: string): void {
    const merged = (JSON.parse(text) as {
      result?: { merged?: Array<{ locator: string; found_by: string[] }> };
    }).result?.merged ?? [];
    for (const entry of merged) {
      if (!entry.found_by.includes(ACTION_PROVIDER)) continue;
      if (this.returned.length < MAX_RETURNED) this.returned.push(entry.locator);
      else this.returned[this.int(0, MAX_RETURNED - 1)] = entry.locator;
    }
  }

  /** A provider other than ACTION_PROVIDER: it answers an action as it answers a search. */
  private otherProvider(): string {
    const others = SOAK_PROVIDERS.filter((p) => p.name !== ACTION_PROVIDER);
    return (others[this.int(0, others.length - 1)] as (typeof others)[0]).name;
  }

  /**
   * An expand: mostly of a locator a search returned (ok), else of one no search did
   * (locator_unknown), now and then of a provider that implements no expand.
   */
  private expandAsk(): { provider: string; locator: string } {
    const r = this.random();
    if (r < 0.6 && this.returned.length > 0) {
      const locator = this.returned[this.int(0, this.returned.length - 1)] as string;
      return { provider: ACTION_PROVIDER, locator };
    }
    if (r < 0.9) {
      return {
        provider: ACTION_PROVIDER,
        locator: `https://notes.example/never/${this.int(1, 1_000_000)}`,
      };
    }
    return { provider: this.otherProvider(), locator: "https://soak.example/1" };
  }

  /** One POST to /mcp, judged as docs/mcp.md allows. */
  private async mcp(init: SendInit, signal: AbortSignal): Promise<Outcome> {
    const res = await this.send(`${this.o.url}/mcp`, init, signal);
    return checkMcp(res.status, res.headers.get("content-type") ?? "", await res.text());
  }

  /** An MCP client's search: initialize, then the tools/call, which must answer a tool result. */
  private async mcpSearch(call: string, signal: AbortSignal): Promise<Outcome> {
    const init = await this.mcp({ method: "POST", body: INITIALIZE, headers: MCP_HEADERS }, signal);
    if (!init.ok) return init;
    if (init.code !== "mcp result") {
      return { ok: false, reason: `initialize answered ${init.code}` };
    }
    const called = await this.mcp({ method: "POST", body: call, headers: MCP_HEADERS }, signal);
    const toolResult = called.ok && called.code.startsWith("mcp ") &&
      called.code !== "mcp result" && called.code !== "mcp 202";
    if (called.ok && !toolResult) {
      return { ok: false, reason: `tools/call search answered ${called.code}, not a tool result` };
    }
    return called;
  }

  /** An NDJSON stream read to its end (or a refusal sent before it began). */
  private async streamed(url: string, init: SendInit, signal: AbortSignal): Promise<Outcome> {
    const res = await this.send(url, init, signal);
    return checkStream(res.status, res.headers.get("content-type") ?? "", await res.text());
  }

  /**
   * A POST that promises 1000 bytes of body and sends a few. With `closeAfter` null it waits for
   * the gateway's 408 request_timeout; otherwise it gives up and closes first.
   */
  private stalledBody(closeAfter: number | null, signal: AbortSignal): Promise<Outcome> {
    const started = performance.now();
    return new Promise<Outcome>((resolve) => {
      const socket = connect(this.o.port, "127.0.0.1");
      let data = Buffer.alloc(0);
      let settled = false;
      const settle = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(closer);
        signal.removeEventListener("abort", onAbort);
        socket.destroy();
        this.slowBodies--;
        resolve(outcome);
      };
      const onAbort = () => settle({ ok: false, reason: "deadline" });
      signal.addEventListener("abort", onAbort);
      const closer = closeAfter === null
        ? undefined
        : setTimeout(() => settle({ ok: true, code: SLOW_BODY_CLOSED }), closeAfter);
      socket.on(
        "error",
        (error) => settle({ ok: false, reason: `no answer: ${errorName(error)}` }),
      );
      socket.on(
        "close",
        () => settle({ ok: false, reason: "stalled body: connection closed without an answer" }),
      );
      socket.on("data", (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        const answer = parseRawAnswer(data);
        if (answer === null) return;
        const verdict = checkEnvelope(answer.status, answer.body);
        if (verdict.ok && verdict.code === "request_timeout") {
          const ms = performance.now() - started;
          if (ms > this.tally.slowestRequestTimeout) this.tally.slowestRequestTimeout = ms;
        }
        settle(
          verdict.ok && verdict.code !== "request_timeout"
            ? { ok: false, reason: `stalled body answered ${verdict.code}, not request_timeout` }
            : verdict,
        );
      });
      socket.write(
        "POST /v1/search HTTP/1.1\r\n" +
          `Host: 127.0.0.1:${this.o.port}\r\n` +
          "content-type: application/json\r\n" +
          "content-length: 1000\r\n\r\n" +
          '{"query',
      );
    });
  }
}

function errorName(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    return `${(cause as NodeJS.ErrnoException).code ?? cause.name}: ${cause.message}`;
  }
  return `${error.name}: ${error.message}`;
}
