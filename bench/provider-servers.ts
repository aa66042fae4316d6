/**
 * Child process: the provider servers of a run, one node:http server per provider on 127.0.0.1,
 * keep-alive, each with its own delay and number of candidates. An `endless` provider answers 200
 * application/json and writes 64 KiB chunks until the socket closes, counting what it wrote.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { envJson, serveIpc } from "./child-ipc.ts";
import { answerBody, candidates, endlessParts } from "./payload.ts";

export type ProviderSpec = {
  name: string;
  scope: string;
  delayMs: number;
  candidates: number;
  endless?: boolean;
};

/** One endless answer: body bytes handed to the socket, and when the peer closed it. */
export type EndlessSession = { written: number; closed: boolean; closedAfterMs: number | null };

const specs = envJson<ProviderSpec[]>("BENCH_PROVIDER_SPECS");
let lastSession: EndlessSession | null = null;

function readLimit(body: string, fallback: number): number {
  try {
    const limit = (JSON.parse(body) as { limit?: unknown }).limit;
    return typeof limit === "number" && limit > 0 ? limit : fallback;
  } catch {
    return fallback;
  }
}

function regular(spec: ProviderSpec) {
  const all = candidates(spec.name, spec.candidates);
  const bodies = new Map<number, Buffer>();
  const bodyFor = (limit: number) => {
    const n = Math.min(limit, all.length);
    let body = bodies.get(n);
    if (body === undefined) {
      body = Buffer.from(answerBody(spec.name, spec.scope, all.slice(0, n)));
      bodies.set(n, body);
    }
    return body;
  };
  return (_req: IncomingMessage, res: ServerResponse, body: string) => {
    const send = () => {
      const bytes = bodyFor(readLimit(body, spec.candidates));
      res.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
      res.end(bytes);
    };
    if (spec.delayMs > 0) setTimeout(send, spec.delayMs);
    else send();
  };
}

function endless(spec: ProviderSpec) {
  const { head, chunk } = endlessParts(spec.name, spec.scope);
  return (_req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const session: EndlessSession = { written: 0, closed: false, closedAfterMs: null };
    lastSession = session;
    res.once("close", () => {
      session.closed = true;
      session.closedAfterMs = performance.now() - started;
    });
    res.writeHead(200, { "content-type": "application/json" });
    res.write(head);
    session.written += Buffer.byteLength(head);
    // Paced at one chunk per millisecond (about 64 MB/s, slower than any reader on loopback) and
    // waiting for 'drain' under backpressure: socket buffers stay nearly empty, so the count tracks
    // what the reader pulled rather than what the kernel was holding when the socket closed.
    const pump = () => {
      if (session.closed || res.destroyed) return;
      const more = res.write(chunk);
      session.written += chunk.length;
      const next = () => setTimeout(pump, 1);
      if (more) next();
      else res.once("drain", next);
    };
    pump();
  };
}

async function start(spec: ProviderSpec): Promise<string> {
  const handle = spec.endless ? endless(spec) : regular(spec);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`;
}

const urls: Record<string, string> = {};
for (const spec of specs) urls[spec.name] = await start(spec);

serveIpc({ urls }, {
  "endless-reset": () => {
    lastSession = null;
    return true;
  },
  "endless-session": () => lastSession,
});
