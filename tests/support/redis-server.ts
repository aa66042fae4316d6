/**
 * A real redis-server (Debian's package) for the Redis suite: started on a free loopback port with
 * no persistence, answered PING before it is handed out, and stopped or restarted on that port.
 *
 * Invariants:
 * - The server never outlives its test process: it runs under a shell that holds a pipe from us and
 *   stops it when the pipe closes, which the kernel does when we exit, however we exit.
 * - `stop()` resolves once the server has exited, so its port refuses connections; it and
 *   `restart()` settle within bounds, or fail with the server's last output.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { type AddressInfo, connect, createServer } from "node:net";
import { delimiter, join } from "node:path";

/** What the suite says when there is no server to start. */
export const REDIS_MISSING = "redis-server is not installed (apt-get install redis-server)";

/** How long a server may take to answer PING after it was started: it starts in milliseconds. */
const START_MS = 10_000;
/** How long a server may take to exit once told to: it saves nothing, so it exits at once. */
const STOP_MS = 5_000;
/** The pause between PINGs while a server starts. */
const PING_EVERY_MS = 20;
/** How long one PING may take: a server on loopback answers within a millisecond. */
const PING_TIMEOUT_MS = 1_000;
/** The last bytes of a server's output kept for a failure's message. */
const OUTPUT_KEPT = 2_000;

export type RedisServer = {
  url: string;
  port: number;
  /** Stops the server (SIGTERM); nothing listens on the port afterwards. Idempotent. */
  stop: () => Promise<void>;
  /** Stops the server and starts a new, empty one on the same port. */
  restart: () => Promise<void>;
};

/** The path of redis-server, on PATH or where Debian puts it; null when it is not installed. */
export function redisServerPath(): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const path = join(dir, "redis-server");
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not in this directory: the next one may have it.
    }
  }
  return null;
}

/** Starts a redis-server on a free loopback port and waits until it answers PING. */
export async function startRedis(): Promise<RedisServer> {
  const binary = redisServerPath();
  if (binary === null) throw new Error(REDIS_MISSING);
  const port = await freePort();
  let running = await launch(binary, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => running.stop(),
    restart: async () => {
      await running.stop();
      running = await launch(binary, port);
    },
  };
}

async function launch(binary: string, port: number): Promise<{ stop: () => Promise<void> }> {
  const args = ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1"];
  // The shell waits for the server and ends with it; beside it, a watcher reads the shell's stdin
  // (our pipe, kept as fd 3: a background job's own stdin is /dev/null) and stops the server when
  // the pipe closes: by stop(), or by the kernel when this process ends.
  const script =
    'exec 3<&0; "$0" "$@" & pid=$!; (cat <&3 >/dev/null; kill "$pid" 2>/dev/null) & wait "$pid"';
  const child = spawn("sh", ["-c", script, binary, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_KEPT));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  child.stdin.on("error", () => {});
  let ended = false;
  const exited = new Promise<void>((resolve) => {
    const end = () => {
      ended = true;
      resolve();
    };
    child.once("exit", end);
    // No shell to run it: nothing started, so nothing to stop.
    child.once("error", end);
  });
  const stop = async () => {
    child.stdin.end();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(resolve, STOP_MS, "late")));
    const outcome = await Promise.race([exited, late]);
    clearTimeout(timer);
    child.stdout.destroy();
    child.stderr.destroy();
    if (outcome === "late") {
      child.kill("SIGKILL");
      throw new Error(`redis-server on port ${port} did not stop: ${output.trim()}`);
    }
  };
  const deadline = performance.now() + START_MS;
  while (!(await ping(port))) {
    if (ended || performance.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer PING on port ${port}: ${output.trim()}`);
    }
    await sleep(PING_EVERY_MS);
  }
  return { stop };
}

/** Whether a server on the port answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(PING_TIMEOUT_MS, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}

/** A port the kernel says is free now, on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
