/**
 * The gateways the API contract test asks (tests/openapi-contract.test.ts), behind one listener on
 * 127.0.0.1 that Prism proxies: the `x-contract-gateway` header picks one, and `x-contract-replay`
 * answers a stored answer again (for a request whose bytes Prism would rewrite, sent to the
 * gateway straight and its answer then shown to Prism).
 *
 * - `default`: what `npm start` serves with no settings (launch() over the embedded default).
 * - `full`: what the default leaves off turned on: tokens (HS256), a signing key (the JWKS and
 *   fetch receipts), mining to a file, the shared state (memory store), the answer cache, caller
 *   limits, one search in flight at most, /docs, fetching pages with 127.0.0.1 opened (the
 *   manifest's `fetch` block) from a loopback site (tests/support/contract-site.ts); providers for every outcome (a
 *   corpus with expand and refresh, a sensitive one, one that fails, one that implements no
 *   action, one that holds, a costly one).
 * - `locked`: every route needs a token, whose keys cannot be fetched; /docs off.
 * - `guarded`: every route needs a token, verified (HS256) as `full`'s are.
 * - `bare`: built with no telemetry port, as a Worker is: no /metrics.
 * - `faulty`: a port that throws on every request, so each route answers its 500.
 * - `minimal`: a manifest of one provider and nothing else (no fetch block, unlike the embedded
 *   default's), no signing key: fetching is off. *
 * What a case may do to them first is tests/support/contract-world.ts's; the tokens cases send are
 * tests/support/contract-tokens.ts's.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway } from "../../src/http/mod.ts";
import { corpusAdapter, type CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../../src/kit/serve-provider.ts";
import { readSettings } from "../../src/config/settings.ts";
import { parseCidr } from "../../src/io/ip-rules.ts";
import { nodeFetchParts } from "../../src/runtime/node-evidence.ts";
import { launch, type Listen, servedPeerAddress } from "../../src/runtime/launch.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { openTraceFile } from "../../src/runtime/trace-file-sink.ts";
import { nodePorts } from "../../src/runtime/node-fetch.ts";
import { GuardedState } from "../../src/state/guarded-state.ts";
import { PrometheusMetrics } from "../../src/observe/prometheus-metrics.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { answer, raw, startServer, type TestServer } from "./servers.ts";
import { manifestOf, settingsFor } from "./gateway.ts";
import { AUDIENCE, ISSUER, keyPair } from "./auth-keys.ts";
import { startSite } from "./contract-site.ts";
import { contractTokens, type TokenName } from "./contract-tokens.ts";
import { Gate, SwitchedCache, type World, worldOf } from "./contract-world.ts";

export type GatewayName = "default" | "full" | "locked" | "guarded" | "bare" | "faulty" | "minimal";
export const GATEWAY_HEADER = "x-contract-gateway";
export const REPLAY_HEADER = "x-contract-replay";

const SECRET = "a contract test secret, 32 bytes or more";
const VIEWER = "globalThis.Scalar = { createApiReference() {} };\n";

/** The full gateway's body deadline (TRACEFETCH_BODY_TIMEOUT_MS). */
const BODY_TIMEOUT_MS = 1_000;

/** The full gateway's own limit per caller a day: a search naming `dear` alone goes past it. */
const COST_MICROS_PER_DAY = 100;

const NOTES: CorpusDocument[] = [
  {
    title: "Deadlines",
    locator: "https://notes.example/deadlines",
    text: "Every call has a deadline.",
    published_at: "2025-03-01",
  },
  {
    title: "Retries",
    locator: "https://notes.example/retries",
    text: "Retry with jitter.",
    published_at: "2025-06-15",
  },
];

export type Gateways = {
  /** The one listener in front of every gateway. */
  url: string;
  port: number;
  world: World;
  token: (name: TokenName) => Promise<string>;
  /** Stores an answer under a key for `x-contract-replay`. */
  store: (key: string, answer: Response) => void;
  close: () => Promise<void>;
};

export async function startGateways(): Promise<Gateways> {
  const closing: Array<() => Promise<unknown>> = [];
  const serve = async (handler: Parameters<typeof startServer>[0]) => {
    const server = await startServer(handler);
    closing.push(() => server.close());
    return server;
  };

  // The embedded default, as npm start launches it: the gateway is the last thing it serves.
  let defaultFetch: Parameters<Listen>[0] | null = null;
  const capture: Listen = (fetch, host, port, deadlines) => {
    defaultFetch = fetch;
    return listen(fetch, host, port, deadlines);
  };
  const launched = await launch(readSettings({ PORT: "0" }), capture, nodePorts());
  closing.push(() => launched.close());

  let current = NOTES;
  const notesAdapter = corpusAdapter("notes", "notes", NOTES, {
    reload: () => Promise.resolve(current),
  });
  const notes = await listen(serveProvider(notesAdapter).fetch, "127.0.0.1", 0);
  closing.push(() => notes.close());
  const notesUrl = `http://127.0.0.1:${notes.port}/search`;
  const hit = [{ title: "Private", locator: "https://private.example/1" }];
  const privateServer = await serve(answer("private", "private", hit));
  const broken = await serve(raw(500, "{}"));
  const bare = await serve(raw(501, "{}"));
  const dear = await serve(answer("dear", "dear", hit));
  const gate = new Gate();
  // A search waits for the gate; a health probe (GET /v1/doctor) is answered at once.
  const slow: TestServer = await serve(async (req, res, body) => {
    if (body.includes('"query"')) await gate.wait();
    answer("slow", "slow", hit)(req, res, body);
  });

  closing.push(await startSite());

  const signing = await keyPair("EdDSA", "gateway-1");
  const dir = await mkdtemp(join(tmpdir(), "tracefetch-contract-"));
  closing.push(() => rm(dir, { recursive: true, force: true }));
  const traceFile = join(dir, "traces.ndjson");
  const fullEnv = {
    TRACEFETCH_AUTH_SECRET: SECRET,
    TRACEFETCH_AUTH_ISSUER: ISSUER,
    TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
    TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
    TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    TRACEFETCH_MAX_INFLIGHT: "1",
    // A body that stops arriving is refused (408) in this long, not the default 10 s; long
    // enough that a case sent while one is held (holdBody) arrives first.
    TRACEFETCH_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    TRACEFETCH_TRACE_FILE: traceFile,
    TRACEFETCH_MINING_CONFIRMED: "1",
    TRACEFETCH_TRACE_SECRET: SECRET,
  };
  // The manifest's fetch block lists a range: read with parseCidr, as the runtimes read it.
  const fullSettings = (manifest: unknown) => ({
    ...readSettings(fullEnv, { parseCidr }).withManifest({ value: manifest, loopback: true }),
    allowLoopback: true,
    describeProviders: false,
    // One body in reading per client, so a held one refuses the next (429 overloaded).
    maxBodiesInRead: 1,
  });
  const fullCache = new SwitchedCache();
  const full = createGateway(
    fullSettings(
      manifestOf([
        { name: "notes", endpoint: notesUrl, cache_ttl_seconds: 60 },
        { name: "lone", scope: "lone", endpoint: notesUrl, isolated: true },
        { name: "private", endpoint: privateServer.url, sensitivity: "account-visible" },
        { name: "broken", endpoint: broken.url },
        { name: "bare", endpoint: bare.url },
        { name: "dear", endpoint: dear.url, cost_micros: COST_MICROS_PER_DAY + 1 },
        { name: "slow", endpoint: slow.url, timeout_seconds: 10 },
      ], {
        caller_limits: { cost_micros_per_day: COST_MICROS_PER_DAY },
        tiers: { fast: { cost_ceiling_micros: 0 } },
        fetch: { allow_private_cidrs: ["127.0.0.1/32"] },
      }),
    ),
    {
      ...nodePorts(),
      evidence: nodeFetchParts(),
      answerCache: fullCache,
      state: new GuardedState(new MemoryStore(), {
        timeoutMs: 1_000,
        secret: SECRET,
        now: () => performance.now(),
        wall: () => Date.now(),
      }),
      traceSink: await openTraceFile(traceFile, 10_000_000),
      apiDocs: () => Promise.resolve(VIEWER),
      peerAddress: servedPeerAddress,
      telemetry: { metrics: new PrometheusMetrics(), tracing: null },
    },
  );
  const guarded = createGateway(
    settingsFor(manifestOf([{ name: "notes", endpoint: notesUrl }]), {
      TRACEFETCH_AUTH_SECRET: SECRET,
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_REQUIRE_AUTH: "on",
    }, { allowLoopback: true, describeProviders: false }),
    {
      ...nodePorts(),
      apiDocs: null,
      peerAddress: servedPeerAddress,
      telemetry: { metrics: new PrometheusMetrics(), tracing: null },
    },
  );
  const locked = createGateway(
    settingsFor(manifestOf([{ name: "notes", endpoint: notesUrl }]), {
      TRACEFETCH_AUTH_JWKS_URL: "http://127.0.0.1:1/jwks.json",
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_REQUIRE_AUTH: "on",
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    }, { allowLoopback: true, describeProviders: false }),
    {
      ...nodePorts(),
      apiDocs: null,
      peerAddress: servedPeerAddress,
      telemetry: { metrics: new PrometheusMetrics(), tracing: null },
    },
  );
  const unobserved = createGateway(
    settingsFor(manifestOf([{ name: "notes", endpoint: notesUrl }]), {}, {
      allowLoopback: true,
      describeProviders: false,
    }),
    { ...nodePorts(), peerAddress: servedPeerAddress },
  );

  const faulty = createGateway(
    settingsFor(manifestOf([{ name: "notes", endpoint: notesUrl }]), {}, {
      allowLoopback: true,
      describeProviders: false,
    }),
    {
      ...nodePorts(),
      peerAddress: () => {
        // Its stack is its message, so the gateway's log of it is one line.
        const fault = new Error("a fault the contract test planted");
        fault.stack = fault.message;
        throw fault;
      },
    },
  );
  const minimal = createGateway(
    settingsFor(manifestOf([{ name: "notes", endpoint: notesUrl }]), {}, {
      allowLoopback: true,
      describeProviders: false,
    }),
    { ...nodePorts(), evidence: nodeFetchParts(), peerAddress: servedPeerAddress },
  );
  const replays = new Map<string, Response>();
  const front = await listen(
    (request, info) => {
      const replay = request.headers.get(REPLAY_HEADER);
      if (replay !== null) {
        const stored = replays.get(replay);
        replays.delete(replay);
        return stored ?? new Response(`no stored answer ${replay}`, { status: 599 });
      }
      const name = request.headers.get(GATEWAY_HEADER) ?? "default";
      if (name === "full") return full.fetch(request, info);
      if (name === "locked") return locked.fetch(request, info);
      if (name === "guarded") return guarded.fetch(request, info);
      if (name === "bare") return unobserved.fetch(request, info);
      if (name === "faulty") return faulty.fetch(request, info);
      if (name === "minimal") return minimal.fetch(request, info);
      if (defaultFetch === null) throw new Error("the embedded default did not serve its gateway");
      return defaultFetch(request, info);
    },
    "127.0.0.1",
    0,
  );
  closing.push(() => front.close());

  const tokens = contractTokens(SECRET);
  const world = worldOf({
    full,
    slow,
    gate,
    cache: fullCache,
    frontPort: front.port,
    pickFull: `${GATEWAY_HEADER}: full`,
    forgetRetries: async () => {
      current = [NOTES[0] as CorpusDocument];
      await notesAdapter.refresh?.(AbortSignal.timeout(5_000));
    },
  });

  return {
    url: `http://127.0.0.1:${front.port}`,
    port: front.port,
    world,
    token: (name) => tokens[name](),
    store: (key, answer) => replays.set(key, answer),
    close: async () => {
      gate.open();
      for (const close of closing.reverse()) await close();
    },
  };
}
