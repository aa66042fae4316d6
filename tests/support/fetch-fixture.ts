/**
 * The world a fetch test runs in, all on loopback: a site on 127.0.0.1, listeners that count every
 * request on the addresses a fetch must never reach (127.0.0.2 and ::1, on the site's port and on a
 * port of their own), and a real DNS server (dns2, UDP) the gateway's resolver is pointed at.
 *
 * The connector every test uses is Node's real one behind a guard: an address that is not loopback
 * is recorded and never sent to, so a broken refusal can fail a test but never send traffic off
 * this machine.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import dns2 from "dns2";
import {
  type Connector,
  createRobotsCache,
  type FetchDeps,
  type FetchPolicy,
  fetchPolicyOf,
  fetchUserAgent,
} from "../../src/evidence/mod.ts";
import { nodeFetchParts } from "../../src/runtime/node-evidence.ts";

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export type Listener = {
  port: number;
  /** Requests received, as `METHOD path` with the Host header. */
  requests: Array<{ path: string; host: string }>;
  close: () => Promise<void>;
};

/** An HTTP server on `host:port` (0: any free port) answering by path. */
export async function listen(
  host: string,
  port: number,
  routes: Record<string, Route> = {},
): Promise<Listener> {
  const sockets = new Set<Socket>();
  const requests: Listener["requests"] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? "";
    requests.push({ path, host: req.headers.host ?? "" });
    const route = routes[path.split("?")[0] ?? ""];
    if (route) return route(req, res);
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not here");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Listeners on every forbidden loopback address this machine has, on `port`, counted together. */
export async function forbiddenListeners(port: number): Promise<{
  count: () => number;
  hosts: string[];
  close: () => Promise<void>;
}> {
  const listeners: Listener[] = [];
  const hosts: string[] = [];
  for (const host of ["127.0.0.2", "::1"]) {
    try {
      listeners.push(await listen(host, port));
      hosts.push(host);
    } catch {
      // A machine without IPv6 loopback still runs every IPv4 case.
    }
  }
  return {
    count: () => listeners.reduce((n, l) => n + l.requests.length, 0),
    hosts,
    close: () => Promise.all(listeners.map((l) => l.close())).then(() => {}),
  };
}

/** A name's A and AAAA answers; a function is asked on every query (rebinding). */
type Answers = { a?: string[]; aaaa?: string[] };
export type Zone = Record<string, Answers | (() => Answers)>;

/** A real DNS server on 127.0.0.1 (UDP) answering from `zone` with TTL 0; others get no answer. */
export async function startDns(
  zone: Zone,
): Promise<{ server: string; queries: string[]; close: () => Promise<void> }> {
  const { Packet } = dns2;
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      if (question) {
        const name = question.name.toLowerCase();
        queries.push(`${name} ${question.type === Packet.TYPE.AAAA ? "AAAA" : "A"}`);
        const entry = zone[name];
        const answers = typeof entry === "function" ? entry() : entry;
        const v6 = question.type === Packet.TYPE.AAAA;
        for (const address of (v6 ? answers?.aaaa : answers?.a) ?? []) {
          // dns2's types ask for a Resource object; its encoder takes the plain record.
          response.answers.push(
            {
              name: question.name,
              type: v6 ? Packet.TYPE.AAAA : Packet.TYPE.A,
              class: Packet.CLASS.IN,
              ttl: 0,
              address,
            } as unknown as (typeof response.answers)[number],
          );
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  const port = (addresses as { udp: AddressInfo }).udp.port;
  return { server: `127.0.0.1:${port}`, queries, close: () => server.close() };
}

/** Node's connector behind the loopback guard (see the file's comment). */
export function guardedConnector(
  connector: Connector,
): { connector: Connector; offLoopback: string[]; sent: string[] } {
  const offLoopback: string[] = [];
  const sent: string[] = [];
  return {
    offLoopback,
    sent,
    connector: {
      pinsAddress: connector.pinsAddress,
      send: (request) => {
        const loopback = request.address.startsWith("127.") || request.address === "::1";
        if (!loopback) {
          offLoopback.push(request.address);
          return Promise.resolve({ ok: false, reason: "unreachable", message: "guarded" });
        }
        sent.push(`${request.address} ${request.url.href}`);
        return connector.send(request);
      },
    },
  };
}

/** The deps of a fetch with the resolver pointed at `dnsServer`, a fresh robots cache each. */
export function fetchDeps(dnsServer: string, signal: AbortSignal = new AbortController().signal) {
  const parts = nodeFetchParts({ dnsServers: [dnsServer] });
  const guard = guardedConnector(parts.connector);
  const deps: FetchDeps = {
    resolve: parts.resolve,
    connector: guard.connector,
    now: () => Date.now(),
    signal,
    robots: createRobotsCache(),
    userAgent: fetchUserAgent("0.0.0-test"),
  };
  return { deps, guard };
}

/** The policy of a manifest fetch block. */
export function policy(block: Partial<Record<keyof FetchPolicyBlock, string[]>> = {}): FetchPolicy {
  return fetchPolicyOf({
    allow_private_cidrs: block.allow_private_cidrs ?? [],
    deny_domains: block.deny_domains ?? [],
    allow_domains: block.allow_domains ?? [],
  }) as FetchPolicy;
}
type FetchPolicyBlock = {
  allow_private_cidrs: string[];
  deny_domains: string[];
  allow_domains: string[];
};

/** A fetch request with the defaults a route would apply. */
export function request(
  url: string,
  extra: Partial<{ format: "markdown" | "text"; max_chars: number; timeout_ms: number }> = {},
) {
  return { url, format: "markdown" as const, max_chars: 20_000, timeout_ms: 5_000, ...extra };
}
