/**
 * Real provider servers on 127.0.0.1 for tests: raw node:http so a test controls every byte,
 * header, delay and reset. Every server tracks its sockets and closes them on `close()`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type TestServer = {
  url: string;
  port: number;
  /** Requests received so far (bodies decoded as text). */
  requests: Array<
    { method: string; url: string; headers: IncomingMessage["headers"]; body: string }
  >;
  /** Sockets currently open. */
  openSockets: () => number;
  close: () => Promise<void>;
};

export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
) => void | Promise<void>;

export async function startServer(handler: Handler): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const requests: TestServer["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      Promise.resolve(handler(req, res, body)).catch((error) => {
        res.destroy(error as Error);
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/search`,
    port,
    requests,
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A well-behaved provider answering `candidates` for whatever it is asked. */
export function answer(
  name: string,
  scope: string,
  candidates: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
): Handler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      schema_version: "tracefetch.provider-response.v1",
      provider: name,
      scope,
      candidates,
      warnings: [],
      ...extra,
    }));
  };
}

/** Hands each request's body to a fetch handler (a kit provider's app) and sends back its answer. */
export function fetchHandler(
  fetch: (request: Request) => Response | Promise<Response>,
): Handler {
  return async (_req, res, body) => {
    const answer = await fetch(
      new Request("http://provider/search", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
    res.end(await answer.text());
  };
}

/** Sends JSON with a status and content type of the test's choosing. */
export function raw(
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Handler {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Receives the request and never answers: no status line, no headers. `close()` ends it. */
export const hold: Handler = () => {};
