/**
 * A TCP proxy on 127.0.0.1 that holds every chunk a client sends for `delayMs` before passing it
 * on, in order; the server's answers come back at once. In front of a redis-server it makes a store
 * that answers each round trip `delayMs` late, for the tests and the bench of the caller's deadline
 * over the store; the moments it received each chunk tell how many round trips came in sequence.
 *
 * Invariants:
 * - Loopback only: it listens on 127.0.0.1 and connects only to the port it was given there.
 * - `close()` destroys every socket it holds and resolves once the listener closed.
 */
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export type DelayProxy = {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** How long each client chunk is held; may be changed between searches. */
  delayMs: number;
  /** When (performance.now()) each client chunk arrived, in order. */
  readonly writes: number[];
  close: () => Promise<void>;
};

/** Starts a proxy to 127.0.0.1:`upstreamPort` that delays what clients send by `delayMs`. */
export async function startDelayProxy(upstreamPort: number, delayMs: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const proxy: DelayProxy = {
    port: 0,
    delayMs,
    writes: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    track(client);
    const upstream = connect(upstreamPort, "127.0.0.1");
    track(upstream);
    client.on("data", (chunk: Buffer) => {
      proxy.writes.push(performance.now());
      // Timers of one duration fire in the order they were set: chunks stay in order.
      setTimeout(() => {
        if (!upstream.destroyed) upstream.write(chunk);
      }, proxy.delayMs);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!client.destroyed) client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as AddressInfo).port;
  return proxy;
}

/**
 * The round trips in sequence among `writes` from `from` on: chunks closer than `gapMs` to the one
 * before went out together (one round trip); a chunk `gapMs` or more after started another.
 */
export function roundTrips(writes: readonly number[], from: number, to: number, gapMs: number) {
  let trips = 0;
  let last = -Infinity;
  for (const at of writes) {
    if (at < from || at > to) continue;
    if (at - last >= gapMs) trips++;
    last = at;
  }
  return trips;
}
