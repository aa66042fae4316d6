/** Serves a fetch handler with @hono/node-server and resolves once it listens (Node only). */
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";

export type Listening = {
  server: ReturnType<typeof serve>;
  port: number;
  close: () => Promise<void>;
};

/** Port 0 lets the system pick a free port, so two launchers side by side never clash. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  hostname = "127.0.0.1",
  port = 0,
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, (info: AddressInfo) =>
      resolve({
        server,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would hold close() open; end them.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      }));
    server.once("error", reject);
  });
}
