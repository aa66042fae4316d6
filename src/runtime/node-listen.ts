/**
 * Serves a fetch handler on Node's HTTP server and resolves once it listens (Node only).
 *
 * Invariants:
 * - Every answer is an envelope, including the ones Node's parser would answer by itself (a
 *   malformed request line or header, oversized headers, a late request, CONNECT): those are
 *   written here with `Connection: close`, because the parser cannot resume on that connection.
 * - Headers and whole requests have deadlines that Node checks every second, so a slow sender
 *   holds a socket for a bounded time.
 */
import { getRequestListener, RequestError } from "@hono/node-server";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { EnvelopeCode } from "../protocol/codes.ts";
import {
  CONNECTIONS_CHECK_INTERVAL_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
} from "../protocol/limits.ts";
import { problemAnswer, problemResponse } from "../http/respond.ts";
import type { ServeInfo } from "./launch.ts";

export type Listening = {
  server: Server;
  port: number;
  close: () => Promise<void>;
};

export type ListenOptions = {
  /** Request headers must arrive within this. */
  headersTimeoutMs?: number;
  /** The body must arrive within this after the headers (the app enforces it too). */
  bodyTimeoutMs?: number;
};

/** Port 0 lets the system pick a free port, so two launchers side by side never clash. */
export function listen(
  fetch: (request: Request, info?: ServeInfo) => Response | Promise<Response>,
  hostname = "127.0.0.1",
  port = 0,
  options: ListenOptions = {},
): Promise<Listening> {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const bodyTimeout = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  // Handed what Deno.serve hands its handler, so one peer port reads both (launch.ts).
  const served = getRequestListener(
    (request, { incoming }) =>
      fetch(request, { remoteAddr: { hostname: incoming.socket.remoteAddress } }),
    {
      hostname,
      // Hono's adapter answers a bare 400 for a target it cannot turn into a URL (`OPTIONS *`,
      // a backslash in the path, a bad Host): answer an envelope instead.
      errorHandler: (error) =>
        problemResponse("unknown", "bad_request", crypto.randomUUID(), requestProblem(error)),
    },
  );
  const server = createServer({
    headersTimeout,
    requestTimeout: headersTimeout + bodyTimeout,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    // Checked below so the refusal is an envelope rather than Node's bare 400.
    requireHostHeader: false,
  }, (req: IncomingMessage, res: ServerResponse) => {
    responses.set(req.socket, res);
    if (req.httpVersion === "1.1" && req.headers.host === undefined) {
      res.shouldKeepAlive = false;
      writeEnvelope(res, "bad_request", "an HTTP/1.1 request needs a Host header");
      return;
    }
    void served(req, res);
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const [code, message] = clientProblem(error);
    refuseOnSocket(socket as Socket, code, message);
  });
  // A CONNECT request would otherwise have its socket closed without a word.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    refuseOnSocket(
      socket as Socket,
      "method_not_allowed",
      "CONNECT is not allowed: this is not a proxy",
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would hold close() open; end them.
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** What a parser error means for the caller, as an envelope code and a message. */
function clientProblem(error: NodeJS.ErrnoException): [EnvelopeCode, string] {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["request_timeout", "the request did not arrive in time; send it promptly and retry"];
    case "HPE_HEADER_OVERFLOW":
      return [
        "headers_too_large",
        "the request line and headers are over 16 KiB; send a long query as a POST body",
      ];
    case "HPE_INVALID_METHOD":
      return ["bad_request", "the request method is not one this server knows"];
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return ["bad_request", "the request has both Transfer-Encoding and Content-Length"];
    default:
      return ["bad_request", "the request is not well-formed HTTP/1.1"];
  }
}

function requestProblem(error: unknown): string {
  if (!(error instanceof RequestError)) return "the request could not be read";
  if (/host/i.test(error.message)) return "the Host header is not a valid host";
  if (/backslash/i.test(error.message)) return "the request path contains a backslash";
  return "the request target is not a path on this server";
}

function writeEnvelope(res: ServerResponse, code: EnvelopeCode, message: string): void {
  const { status, headers, body } = problemAnswer(code, message);
  res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Each socket's latest response, replaced by the next request's. Node writes a socket's responses
 * one after another, each once the one before has finished, so while the latest is unfinished it is
 * either the one on the socket or queued behind one (HTTP/1.1 pipelining); once it has finished,
 * every response on the socket has.
 */
const responses = new WeakMap<Socket, ServerResponse>();

/**
 * Whether a response is under way on the socket: one that has begun (its headers sent), or one
 * queued behind another, which has begun or will. An envelope written then would be read as part
 * of that response, or as the answer to an earlier request.
 */
function responding(socket: Socket): boolean {
  const latest = responses.get(socket);
  if (latest === undefined || latest.writableFinished) return false;
  return latest.socket !== socket || latest.headersSent;
}

/**
 * Writes an envelope straight to a socket whose parser has given up, then closes it. A socket
 * with a response under way is only closed: writing would corrupt that response.
 */
function refuseOnSocket(socket: Socket, code: EnvelopeCode, message: string): void {
  if (!socket.writable || responding(socket)) {
    socket.destroy();
    return;
  }
  const { status, headers, body } = problemAnswer(code, message);
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  405: "Method Not Allowed",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};
