/**
 * The raw node:net provider servers of the fuzz: one plays a scripted answer byte for byte
 * (chosen by the request's x-request-id, which the gateway forwards), one always answers HEALTHY;
 * plus the manifest entries of the two and the search query for one answer.
 */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import { type FuzzAnswer, FUZZED, HEALTHY_NAME } from "./fuzz-answer.ts";
import { render, type Rendered } from "./fuzz-render.ts";
import { HEALTHY } from "./outcomes.ts";

/** A search whose fuzzed provider hangs ends at this deadline, so a hang costs one short wait. */
export const HANG_DEADLINE_MS = 150;
/** Every other search's deadline: far above a loopback exchange, so only a real stall reaches it. */
export const DEADLINE_MS = 3_000;

const encoder = new TextEncoder();

/** One scripted answer: its bytes, and what the request that fetched it said. */
export type Played = {
  answer: FuzzAnswer;
  rendered: Rendered;
  /** Whether the gateway asked for it at all. */
  requested: boolean;
  /** The request's Accept-Encoding: a codec the client did not offer may reach it undecoded. */
  acceptEncoding: string | null;
};

export type FuzzProviders = {
  fuzzedEndpoint: string;
  healthyEndpoint: string;
  /** host:port of both servers: never shown to a caller. */
  hosts: string[];
  script: (requestId: string, answer: FuzzAnswer) => Played;
  forget: (requestId: string) => void;
  close: () => Promise<void>;
};

const HEALTHY_BODY = encoder.encode(JSON.stringify({
  schema_version: "tracefetch.provider-response.v1",
  provider: HEALTHY_NAME,
  scope: HEALTHY_NAME,
  candidates: [HEALTHY],
  warnings: [],
}));
const HEALTHY_ANSWER = Buffer.concat([
  encoder.encode(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${HEALTHY_BODY.length}\r\n\r\n`,
  ),
  HEALTHY_BODY,
]);

/** A socket left hanging is destroyed after this long even if the client never gives up. */
const HANG_LIMIT_MS = 5_000;

/**
 * Reads HTTP/1.1 requests off a socket (content-length or chunked bodies) and calls `onRequest`
 * with each one's header block.
 */
function readRequests(socket: Socket, onRequest: (head: string) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on("data", (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    for (;;) {
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let total: number;
      if (length) {
        total = end + 4 + Number(length[1]);
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const last = buffered.indexOf("\r\n0\r\n\r\n", end);
        if (last < 0) return;
        total = last + 7;
      } else {
        total = end + 4;
      }
      if (buffered.length < total) return;
      buffered = buffered.subarray(total);
      onRequest(head);
    }
  });
}

function track(server: Server, sockets: Set<Socket>): void {
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    // The client resets and aborts on purpose; a write after that is expected to fail.
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function write(socket: Socket, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    if (socket.write(bytes)) return resolve();
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}

/** Larger writes are split so a client's cancel at the cap stops the server quickly. */
const WRITE_SLICE = 64 * 1024;

async function play(socket: Socket, a: FuzzAnswer, r: Rendered): Promise<void> {
  for (const piece of r.writes) {
    for (let at = 0; at < piece.length && !socket.destroyed; at += WRITE_SLICE) {
      await write(socket, piece.subarray(at, at + WRITE_SLICE));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (socket.destroyed) return;
  switch (a.ending.kind) {
    case "end":
    case "close-at":
      socket.end();
      return;
    case "reset-at":
      if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
      else socket.destroy();
      return;
    case "hang-at": {
      // Hold the socket until the client gives up (its deadline) or the limit passes.
      socket.on("end", () => socket.destroy());
      const timer = setTimeout(() => socket.destroy(), HANG_LIMIT_MS);
      socket.on("close", () => clearTimeout(timer));
      return;
    }
  }
}

export async function startFuzzProviders(): Promise<FuzzProviders> {
  const scripts = new Map<string, Played>();
  const sockets = new Set<Socket>();
  const fuzzed = createServer((socket) => {
    readRequests(socket, (head) => {
      const id = /\r\nx-request-id:\s*([^\r]*)/i.exec(head)?.[1]?.trim() ?? "";
      const entry = scripts.get(id);
      if (entry === undefined) {
        socket.end("HTTP/1.1 599 No Script\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
      }
      entry.requested = true;
      entry.acceptEncoding = /\r\naccept-encoding:\s*([^\r]*)/i.exec(head)?.[1] ?? null;
      void play(socket, entry.answer, entry.rendered);
    });
  });
  const healthy = createServer((socket) => {
    readRequests(socket, () => socket.write(HEALTHY_ANSWER));
  });
  track(fuzzed, sockets);
  track(healthy, sockets);
  const fuzzedPort = await listen(fuzzed);
  const healthyPort = await listen(healthy);
  return {
    fuzzedEndpoint: `http://127.0.0.1:${fuzzedPort}/search`,
    healthyEndpoint: `http://127.0.0.1:${healthyPort}/search`,
    hosts: [`127.0.0.1:${fuzzedPort}`, `127.0.0.1:${healthyPort}`],
    script: (id, answer) => {
      const played: Played = {
        answer,
        rendered: render(answer),
        requested: false,
        acceptEncoding: null,
      };
      scripts.set(id, played);
      return played;
    },
    forget: (id) => scripts.delete(id),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        [fuzzed, healthy].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
    },
  };
}

/** The manifest entries of the two providers. */
export function fuzzProviderEntries(providers: FuzzProviders) {
  return [
    { name: FUZZED, endpoint: providers.fuzzedEndpoint },
    { name: HEALTHY_NAME, endpoint: providers.healthyEndpoint },
  ];
}

/** The search's query string for one answer: a hang gets a short deadline so it ends fast. */
export function searchQuery(a: FuzzAnswer): string {
  const hangs = a.ending.kind === "hang-at";
  return new URLSearchParams({
    q: "fuzz",
    providers: `${FUZZED},${HEALTHY_NAME}`,
    limit: String(a.limit),
    timeout_ms: String(hangs ? HANG_DEADLINE_MS : DEADLINE_MS),
  }).toString();
}
