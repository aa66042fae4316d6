/**
 * A provider on 127.0.0.1 that counts the requests open at it, as the provider sees them: a request
 * opens when its headers arrive (the server's `request` event) and stays open until its response
 * ends or its connection closes (the response's `close` event), so one the gateway aborted counts
 * until its connection is really torn down.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type CountingProvider = {
  url: string;
  /** Requests open now. */
  open: () => number;
  /** The most requests ever open at once. */
  maxOpen: () => number;
  /** Requests received. */
  received: () => number;
  close: () => Promise<void>;
};

/** Answers each request after `delayMs` with what `answer` makes of its JSON body. */
export async function countingProvider(
  delayMs: number,
  answer: (body: Record<string, unknown>) => { status: number; json: unknown },
): Promise<CountingProvider> {
  let open = 0;
  let maxOpen = 0;
  let received = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    open++;
    received++;
    maxOpen = Math.max(maxOpen, open);
    res.on("close", () => open--);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (res.destroyed) return;
        const { status, json } = answer(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      }, delayMs);
      timers.add(timer);
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
    open: () => open,
    maxOpen: () => maxOpen,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A valid expand answer of provider `name` (its scope the same) about the locator asked. */
export function evidenceOf(
  name: string,
  fields: { title?: string; text?: string } = {},
): (body: Record<string, unknown>) => { status: number; json: unknown } {
  return (body) => ({
    status: 200,
    json: {
      schema_version: "tracefetch.provider-expand.v1",
      provider: name,
      scope: name,
      locator: body.locator,
      title: fields.title ?? "A page",
      text: fields.text ?? "The page's text.",
      content_type: "text/plain",
      retrieved_at: "2025-01-01T00:00:00Z",
    },
  });
}
