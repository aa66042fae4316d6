/**
 * The gateway the route fuzz suites drive (tests/action-request-fuzz.test.ts,
 * tests/action-answer-fuzz.test.ts, tests/mcp-fuzz.test.ts), in process over real providers on
 * 127.0.0.1:
 *
 * - `notes`, public, and `vault`, internal (isolated, its scope needed): each a corpus adapter that
 *   implements expand and refresh, served by the kit's `serveProvider`;
 * - `fuzzed`, public: a node:http server that plays the answer scripted for a request's
 *   x-request-id (which the gateway forwards), for the generated provider answers.
 *
 * Every provider records the x-request-id of every request it receives, so a suite can tell
 * whether a request the gateway refused reached one. Caller tokens are real (EdDSA, verified by
 * the gateway's JWKS): one grants `tracefetch-admin`, one the vault's scope, one both; the
 * gateway signs the provider token the vault is sent.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Buffer } from "node:buffer";
import { corpusAdapter, type CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../../src/kit/serve-provider.ts";
import { ADMIN_SCOPE } from "../../src/core/caller.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { gateway } from "./gateway.ts";
import { AUDIENCE, ISSUER, keyPair, sign } from "./auth-keys.ts";

export const NOTES = "notes";
export const VAULT = "vault";
export const FUZZED = "fuzzed";

export type FixtureDoc = CorpusDocument;

export const NOTES_DOCS: readonly FixtureDoc[] = [
  {
    title: "Deadlines",
    locator: "https://notes.example/deadlines",
    text: "Every call has a deadline.\n\nA deadline that is not propagated is a wish.",
    published_at: "2025-03-01",
  },
  {
    title: "Retries",
    locator: "https://notes.example/retries",
    text: "Retry with jitter, and only what is idempotent.",
    published_at: "2025-06-15",
  },
];
export const VAULT_DOCS: readonly FixtureDoc[] = [
  {
    title: "Runbook",
    locator: "https://vault.example/runbook",
    text: "Page the on-call engineer, then read the deadline dashboards.",
  },
];

/**
 * The `fuzzed` provider's manifest timeout: no scripted answer hangs, so only a machine far busier
 * than a test run's (npm test runs two files at once) reaches it; within fuzz-property.ts's
 * HUNG_RUN_MS, so a call that did would fail its run rather than stall the suite.
 */
export const FUZZED_TIMEOUT_SECONDS = 10;

/** One scripted answer of the `fuzzed` provider. */
export type Script = {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
  /** `reset`: the socket is destroyed after the head, before any byte of the body. */
  ending: "end" | "reset";
};

/** What the `fuzzed` provider saw of the request its script answered. */
export type Seen = { requested: boolean; action: string | null; locator: string | null };

export type ActionFixture = {
  app: ReturnType<typeof gateway>;
  /** Bearer tokens by what they grant. */
  tokens: { admin: string; reader: string; both: string };
  /** Which providers received a request with this x-request-id. */
  reached: (requestId: string) => string[];
  /** Scripts the `fuzzed` provider's answer to the request with this x-request-id. */
  script: (requestId: string, script: Script) => Seen;
  forget: (requestId: string) => void;
  /** host:port of every provider: never shown to a caller. */
  hosts: string[];
  close: () => Promise<void>;
};

function recording(
  name: string,
  seen: Map<string, Set<string>>,
  fetch: (request: Request) => Response | Promise<Response>,
) {
  return (request: Request) => {
    const id = request.headers.get("x-request-id") ?? "";
    let names = seen.get(id);
    if (names === undefined) seen.set(id, names = new Set());
    names.add(name);
    return fetch(request);
  };
}

async function scriptedProvider(
  seen: Map<string, Set<string>>,
  scripts: Map<string, { script: Script; seen: Seen }>,
): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["x-request-id"] ?? "");
      let names = seen.get(id);
      if (names === undefined) seen.set(id, names = new Set());
      names.add(FUZZED);
      const entry = scripts.get(id);
      if (entry === undefined) {
        res.writeHead(599, { "content-length": "0" });
        res.end();
        return;
      }
      entry.seen.requested = true;
      try {
        const asked = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        entry.seen.action = typeof asked.action === "string" ? asked.action : null;
        entry.seen.locator = typeof asked.locator === "string" ? asked.locator : null;
      } catch {
        // The gateway always sends JSON; a test that reads `action` fails on null.
      }
      const { script } = entry;
      // The headers exactly as scripted: node:http adds only Date, Connection and Keep-Alive.
      res.writeHead(script.status, script.headers.flat());
      if (script.ending === "reset") {
        res.flushHeaders();
        res.socket?.destroy();
        return;
      }
      res.end(Buffer.from(script.body));
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

export async function startActionFixture(): Promise<ActionFixture> {
  const seen = new Map<string, Set<string>>();
  const scripts = new Map<string, { script: Script; seen: Seen }>();
  const reload = (docs: readonly FixtureDoc[]) => () => Promise.resolve(docs);
  const notes = await listen(
    recording(
      NOTES,
      seen,
      serveProvider(corpusAdapter(NOTES, NOTES, NOTES_DOCS, { reload: reload(NOTES_DOCS) })).fetch,
    ),
    "127.0.0.1",
    0,
  );
  const vault = await listen(
    recording(
      VAULT,
      seen,
      serveProvider(corpusAdapter(VAULT, VAULT, VAULT_DOCS, { reload: reload(VAULT_DOCS) })).fetch,
    ),
    "127.0.0.1",
    0,
  );
  const fuzzed = await scriptedProvider(seen, scripts);
  const [key, signing] = await Promise.all([
    keyPair("EdDSA", "fuzz-1"),
    keyPair("EdDSA", "fuzz-gateway-1"),
  ]);
  const tokens = {
    admin: await sign(key, { scope: ADMIN_SCOPE }),
    reader: await sign(key, { scope: `tracefetch:${VAULT}` }),
    both: await sign(key, { scope: `${ADMIN_SCOPE} tracefetch:${VAULT}` }),
  };
  const app = gateway([
    { name: NOTES, scope: NOTES, endpoint: `http://127.0.0.1:${notes.port}/` },
    {
      name: VAULT,
      scope: VAULT,
      endpoint: `http://127.0.0.1:${vault.port}/`,
      sensitivity: "internal",
      isolated: true,
    },
    {
      name: FUZZED,
      scope: FUZZED,
      endpoint: `http://127.0.0.1:${fuzzed.port}/`,
      timeout_seconds: FUZZED_TIMEOUT_SECONDS,
    },
  ], {
    env: {
      TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [key.publicJwk] }),
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      // The vault, being sensitive, is sent a gateway token.
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    },
    // Every generated answer must reach its provider, however many of them fail.
    settings: { suspendProviders: false },
  });
  return {
    app,
    tokens,
    reached: (id) => [...(seen.get(id) ?? [])],
    script: (id, script) => {
      const entry = { script, seen: { requested: false, action: null, locator: null } };
      scripts.set(id, entry);
      return entry.seen;
    },
    forget: (id) => {
      scripts.delete(id);
      seen.delete(id);
    },
    hosts: [notes.port, vault.port, fuzzed.port].map((p) => `127.0.0.1:${p}`),
    close: async () => {
      for (const socket of fuzzed.sockets) socket.destroy();
      await new Promise<void>((resolve) => fuzzed.server.close(() => resolve()));
      await notes.close();
      await vault.close();
    },
  };
}
