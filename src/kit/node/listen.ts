/**
 * listen(fetch, hostname, port): serves a provider's fetch handler on Node's HTTP server and
 * resolves once it listens. Request headers, and then the whole request, have deadlines, so a slow
 * sender holds a socket for a bounded time.
 */
import { getRequestListener } from "@hono/node-server";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CONNECTIONS_CHECK_INTERVAL_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
} from "../../protocol/limits.ts";
import type { FetchHandler, Served } from "../listener.ts";

export type Listening = Served & { server: Server };

export type ListenOptions = {
  /** Request headers must arrive within this. */
  headersTimeoutMs?: number;
  /** The body must arrive within this after the headers. */
  bodyTimeoutMs?: number;
};

/** Port 0 lets the system pick a free port, so two providers side by side never clash. */
export function listen(
  fetch: FetchHandler,
  hostname = "127.0.0.1",
  port = 0,
  options: ListenOptions = {},
): Promise<Listening> {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const bodyTimeout = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: headersTimeout + bodyTimeout,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    getRequestListener(fetch, { hostname }),
  );
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
