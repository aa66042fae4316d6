/**
 * Child process of `npm run soak`: eight providers on 127.0.0.1, one node:http server each. Seven
 * behave as providers do in production on a bad day: one answers at once, one slowly, one never,
 * one fails (500, and sometimes 429 with Retry-After), one streams JSON until the socket closes,
 * one drips a valid body a byte at a time, and one answers 204; they answer an expand or a refresh
 * as they answer a search. The eighth, `notes`, is a corpus served by the kit's `serveProvider`
 * that implements every action: searches, expands of the locators it issued (locator_unknown for
 * others) and refreshes (it reloads its documents).
 *
 * It counts the answers each provider has begun and not yet finished or lost: once the soak stops
 * its load, every one of them should have been abandoned by the gateway, so a count left above 0
 * is an attempt the gateway never let go of.
 *
 * It is also the gateway's leash: the gateway runs as `npm start` runs it, with no IPC channel, so
 * when the soak process dies without cleaning up (SIGKILL), this child, which notices its parent
 * leaving through the IPC channel, kills the pid it was asked to guard.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { corpusAdapter } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { serveIpc } from "./child-ipc.ts";
import { answerBody, candidates, endlessParts } from "./payload.ts";
import {
  notesDocuments,
  PROVIDER_KEEP_ALIVE_MS,
  QUERY_WORDS,
  SOAK_PROVIDERS,
  type SoakProvider,
  type SoakProvidersInfo,
  type SoakProviderStats,
} from "./soak-setup.ts";

const FAST_CANDIDATES = 8;
const SLOW_MIN_MS = 300;
const SLOW_MAX_MS = 800;
const DRIP_EVERY_MS = 50;
/** One failing answer in this many is a 429 with Retry-After instead of a 500. */
const RATE_LIMIT_EVERY = 4;

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

function readLimit(body: string): number {
  try {
    const limit = (JSON.parse(body) as { limit?: unknown }).limit;
    return typeof limit === "number" && limit > 0 ? limit : FAST_CANDIDATES;
  } catch {
    return FAST_CANDIDATES;
  }
}

function sendJson(res: ServerResponse, status: number, body: string, extra = {}): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

function answering(provider: SoakProvider, delay: () => number): Handler {
  const all = candidates(provider.name, FAST_CANDIDATES);
  return (_req, res, body) => {
    const send = () => {
      if (res.destroyed) return;
      sendJson(res, 200, answerBody(provider.name, provider.scope, all.slice(0, readLimit(body))));
    };
    const ms = delay();
    if (ms > 0) setTimeout(send, ms);
    else send();
  };
}

function failing(): Handler {
  let n = 0;
  return (_req, res) => {
    n++;
    if (n % RATE_LIMIT_EVERY === 0) {
      const body = JSON.stringify({
        schema_version: "tracefetch.provider-error.v1",
        code: "rate_limited",
        message: "soak: too many requests",
      });
      sendJson(res, 429, body, { "retry-after": "1" });
      return;
    }
    const body = JSON.stringify({
      schema_version: "tracefetch.provider-error.v1",
      code: "search_failed",
      message: "soak: the index is unavailable",
    });
    sendJson(res, 500, body);
  };
}

function endless(provider: SoakProvider): Handler {
  const { head, chunk } = endlessParts(provider.name, provider.scope);
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write(head);
    // One chunk per millisecond at most, waiting for 'drain': the reader sets the pace.
    const pump = () => {
      if (res.destroyed || res.writableEnded) return;
      const next = () => setTimeout(pump, 1);
      if (res.write(chunk)) next();
      else res.once("drain", next);
    };
    pump();
  };
}

function dripping(provider: SoakProvider): Handler {
  const body = Buffer.from(answerBody(provider.name, provider.scope, candidates(provider.name, 1)));
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed) {
        clearInterval(timer);
        return;
      }
      res.write(body.subarray(at, at + 1));
      at++;
      if (at >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, DRIP_EVERY_MS);
    res.once("close", () => clearInterval(timer));
  };
}

function handlerFor(provider: SoakProvider): Handler {
  switch (provider.name) {
    case "fast":
      return answering(provider, () => 0);
    case "slow":
      return answering(
        provider,
        () => SLOW_MIN_MS + Math.floor(Math.random() * (SLOW_MAX_MS - SLOW_MIN_MS)),
      );
    case "hanging":
      return () => {};
    case "failing":
      return failing();
    case "endless":
      return endless(provider);
    case "dripping":
      return dripping(provider);
    case "no-content":
      return (_req, res) => {
        res.writeHead(204);
        res.end();
      };
    case "notes":
      throw new Error("notes is served by serveProvider, not a handler");
  }
}

/** The `notes` corpus over HTTP: the kit's app behind node:http, the body left for it to read. */
function notesListener(
  provider: SoakProvider,
): (req: IncomingMessage, res: ServerResponse) => void {
  const documents = notesDocuments(QUERY_WORDS);
  const adapter = corpusAdapter(provider.name, provider.scope, documents, {
    reload: () => Promise.resolve(documents),
  });
  return getRequestListener(serveProvider(adapter).fetch);
}

const stats: SoakProviderStats = {};

async function start(provider: SoakProvider): Promise<string> {
  const served = provider.name === "notes" ? notesListener(provider) : null;
  const handle = served === null ? handlerFor(provider) : null;
  const counts = { requests: 0, open: 0 };
  stats[provider.name] = counts;
  const server = createServer((req, res) => {
    counts.requests++;
    counts.open++;
    // 'close' comes once per response, whether it finished or the peer went away.
    res.once("close", () => counts.open--);
    if (served !== null) {
      served(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle?.(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  server.keepAliveTimeout = PROVIDER_KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

let guarded: number | null = null;
const killGuarded = () => {
  if (guarded === null) return;
  try {
    process.kill(guarded, "SIGKILL");
  } catch {
    // Already gone.
  }
  guarded = null;
};
// Registered before serveIpc's own handler, which exits: the guarded pid is killed first.
process.on("disconnect", killGuarded);

const urls: Record<string, string> = {};
for (const provider of SOAK_PROVIDERS) urls[provider.name] = await start(provider);

serveIpc({ urls } satisfies SoakProvidersInfo, {
  stats: () => stats,
  guard: (pid) => {
    guarded = typeof pid === "number" ? pid : null;
    return true;
  },
  unguard: () => {
    guarded = null;
    return true;
  },
});
