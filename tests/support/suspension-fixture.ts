/**
 * Providers on 127.0.0.1 that fail on demand, for the suspension tests (docs/protocol.md,
 * "Suspension"): the test switches what each query gets, holds answers back, and tells a caller's
 * search from the gateway's own probe (a search for the conformance default query).
 */
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { answer, type Handler, sleep, startServer, type TestServer } from "./servers.ts";
import { assertEnvelope, gateway, type ProviderEntry } from "./gateway.ts";

/** What the gateway's probe asks a provider that declares no health. */
export const PROBE_QUERY = "search";

export type Mode =
  | { kind: "ok" }
  | { kind: "fail"; status: number; headers?: Record<string, string> }
  | { kind: "hold" };

/** A search request as the provider received it. */
export type Received = { query: string; limit: number; authorization: string | undefined };

/** A provider whose answers the test switches, and the responses it holds back. */
export type Controlled = {
  server: TestServer;
  /** What every search gets, unless `modeOf` says otherwise for its query. */
  mode: Mode;
  modeOf: ((query: string) => Mode | null) | null;
  held: ServerResponse[];
  /** Search requests received (other actions are not counted). */
  searches: () => number;
  /** The gateway's own probes received: searches for PROBE_QUERY. */
  probes: () => Received[];
};

type SearchBody = { action?: unknown; query?: unknown; limit?: unknown };

const parsed = (body: string): SearchBody => {
  try {
    return JSON.parse(body) as SearchBody;
  } catch {
    return {};
  }
};

const searchesOf = (server: TestServer): Received[] =>
  server.requests.flatMap((r) => {
    const body = parsed(r.body);
    if (body.action !== "search") return [];
    const authorization = r.headers.authorization;
    return [{ query: String(body.query), limit: Number(body.limit), authorization }];
  });

export async function provider(name: string): Promise<Controlled> {
  const ok = answer(name, name, [{ title: "T", locator: "https://example.com/a", snippet: "s" }]);
  const ctl: Controlled = {
    server: undefined as unknown as TestServer,
    mode: { kind: "ok" },
    modeOf: null,
    held: [],
    searches: () => searchesOf(ctl.server).length,
    probes: () => searchesOf(ctl.server).filter((s) => s.query === PROBE_QUERY),
  };
  const handler: Handler = (req, res, body) => {
    const request = parsed(body);
    // Only searches: any other action is refused as a search-only provider refuses it.
    if (request.action !== "search") {
      res.writeHead(501, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    const mode = ctl.modeOf?.(String(request.query)) ?? ctl.mode;
    switch (mode.kind) {
      case "ok":
        return ok(req, res, body);
      case "fail":
        res.writeHead(mode.status, { "content-type": "application/json", ...mode.headers });
        res.end("{}");
        return;
      case "hold":
        ctl.held.push(res);
        return;
    }
  };
  ctl.server = await startServer(handler);
  return ctl;
}

/** Answers every held request: a success, or the status given. */
export function releaseHeld(ctl: Controlled, name: string, status = 200) {
  const ok = answer(name, name, [{ title: "T", locator: "https://example.com/a", snippet: "s" }]);
  for (const res of ctl.held.splice(0)) {
    if (status === 200) void ok(undefined as never, res, "");
    else {
      res.writeHead(status, { "content-type": "application/json" });
      res.end("{}");
    }
  }
}

export async function waitFor(what: string, ready: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 400; i++) {
    if (await ready()) return;
    await sleep(5);
  }
  assert.ok(await ready(), `timed out waiting for ${what}`);
}

/** A clock the test moves by hand. */
export function clock() {
  const c = { t: 1_000_000, now: () => c.t };
  return c;
}

export function attemptOf(
  body: { result: { candidates: Array<{ provider: string }> } },
  name: string,
) {
  const found = body.result.candidates.find((r) => r.provider === name);
  assert.ok(found, `no attempt of ${name}`);
  return found as unknown as {
    outcome: string;
    code: string;
    message: string;
    budget?: string;
  };
}

export type Shown = { name: string; state: string; until?: string; consecutive_failures?: number };

export async function status(app: ReturnType<typeof gateway>): Promise<Shown[]> {
  const res = await app.request("/v1/status");
  const body = assertEnvelope(await res.json());
  return (body.result.providers as Array<Shown & { health?: unknown }>).map((
    { health: _health, ...shown },
  ) => shown);
}

/** Waits until `/v1/status` shows the provider as `expected` (the gateway's probe answered). */
export async function shownAs(app: ReturnType<typeof gateway>, name: string, expected: string) {
  let last: Shown | undefined;
  await waitFor(`${name} shown ${expected}`, async () => {
    last = (await status(app)).find((p) => p.name === name);
    return last?.state === expected;
  });
  return last as Shown;
}

export function withApp(entries: ProviderEntry[], c: ReturnType<typeof clock>) {
  return gateway(entries, { ports: { now: c.now } });
}
