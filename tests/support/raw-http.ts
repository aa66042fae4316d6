/**
 * Raw HTTP/1.1 exchanges over a TCP socket, for requests no HTTP client would send: the test
 * controls every byte and sees whether the server closed the connection.
 */
import { connect, type Socket } from "node:net";

export type RawAnswer = {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server ended the connection after answering. */
  closed: boolean;
  /** Milliseconds from the first byte sent to the end of the answer. */
  elapsedMs: number;
};

/** Opens a connection to 127.0.0.1:port. */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * Reads one answer from a socket: waits for the header block, then for `content-length` bytes of
 * body, or for the connection to close. Resolves null when nothing arrives within `timeoutMs`.
 */
export function readAnswer(socket: Socket, timeoutMs: number): Promise<RawAnswer | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    let data = Buffer.alloc(0);
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve(parse(data, closed, performance.now() - started));
    };
    const complete = () => {
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(data.subarray(0, end).toString("latin1"));
      return length !== null && data.length >= end + 4 + Number(length[1]);
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      // Give a closing server a moment to close, so `closed` reports what it meant to do.
      if (complete()) setTimeout(finish, 50);
    };
    const onClose = () => {
      closed = true;
      finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.on("error", () => {});
  });
}

/** Sends `bytes` on a fresh connection and reads the answer. */
export async function exchange(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 3_000,
): Promise<RawAnswer | null> {
  const socket = await open(port);
  try {
    const answer = readAnswer(socket, timeoutMs);
    socket.write(bytes);
    return await answer;
  } finally {
    socket.destroy();
  }
}

function parse(data: Buffer, closed: boolean, elapsedMs: number): RawAnswer | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine = "", ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: data.subarray(end + 4).toString("utf8"),
    closed,
    elapsedMs,
  };
}
