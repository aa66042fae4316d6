/**
 * A real redis-server (Debian's package) for the Redis suite: started on a free loopback port with
 * no persistence, answered PING before it is handed out, and stopped or restarted on that port.
 * It runs as every such server does (tests/support/daemon.ts): never past its test process.
 *
 * Invariants:
 * - `stop()` resolves once the server has exited, so its port refuses connections; it and
 *   `restart()` settle within bounds, or fail with the server's last output.
 */
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { freePort, installedPath, startDaemon } from "./daemon.ts";

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
  return installedPath("redis-server");
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

async function launch(
  binary: string,
  port: number,
  extra: string[] = [],
): Promise<{ stop: () => Promise<void> }> {
  const args = [
    ...["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1"],
    ...extra,
  ];
  const server = await startDaemon(binary, args, {
    what: `redis-server on port ${port}`,
    ready: () => ping(port),
    startMs: START_MS,
    stopMs: STOP_MS,
    pollMs: PING_EVERY_MS,
  });
  return {
    stop: async () => {
      if ((await server.stop()) === "late") {
        throw new Error(`redis-server on port ${port} did not stop: ${server.output().trim()}`);
      }
    },
  };
}

/** A Redis Cluster of Debian's redis-server on loopback, every slot assigned, no replicas. */
export type RedisCluster = {
  /** `redis+cluster://` with every node as a seed. */
  url: string;
  ports: number[];
  /** Stops every node and deletes their directories. */
  stop: () => Promise<void>;
};

/** The nodes of a test cluster: the fewest redis-cli creates a cluster of. */
const CLUSTER_NODES = 3;
/**
 * The range cluster ports are drawn from: a node also listens on its port + 10000 (the cluster
 * bus), which must be a port too, and below the kernel's ephemeral range, where the other tests'
 * servers are.
 */
const CLUSTER_PORT_LOW = 20_000;
const CLUSTER_PORT_HIGH = 30_000;
/** How long the cluster may take to agree on its slots once created: a second or two on loopback. */
const CLUSTER_READY_MS = 20_000;

/**
 * Starts CLUSTER_NODES nodes, each in a directory of its own under the system's temp folder, joins
 * them with `redis-cli --cluster create`, and waits until every node says `cluster_state:ok`.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const binary = redisServerPath();
  if (binary === null) throw new Error(REDIS_MISSING);
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const ports: number[] = [];
  const nodes: Array<{ stop: () => Promise<void>; dir: string }> = [];
  const stop = async () => {
    for (const node of nodes) {
      await node.stop();
      await rm(node.dir, { recursive: true, force: true });
    }
  };
  try {
    for (let i = 0; i < CLUSTER_NODES; i++) {
      const port = await freeClusterPort(ports);
      const dir = await mkdtemp(join(tmpdir(), "tracefetch-redis-cluster-"));
      const extra = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
      nodes.push({ ...await launch(binary, port, [...extra, "--dir", dir]), dir });
      ports.push(port);
    }
    const cli = join(dirname(binary), "redis-cli");
    const hosts = ports.map((port) => `127.0.0.1:${port}`);
    await run(cli, ["--cluster", "create", ...hosts, "--cluster-replicas", "0", "--cluster-yes"]);
    const deadline = performance.now() + CLUSTER_READY_MS;
    for (const port of ports) {
      while (!(await ask(port, "CLUSTER INFO")).includes("cluster_state:ok")) {
        if (performance.now() > deadline) throw new Error(`the cluster on ${port} never said ok`);
        await sleep(PING_EVERY_MS * 5);
      }
    }
    return { url: `redis+cluster://${hosts.join(",")}`, ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A port in the cluster range whose bus port (+ 10000) is free too, not among `taken`. */
async function freeClusterPort(taken: number[]): Promise<number> {
  for (;;) {
    const span = CLUSTER_PORT_HIGH - CLUSTER_PORT_LOW;
    const port = CLUSTER_PORT_LOW + Math.floor(Math.random() * span);
    if (taken.includes(port)) continue;
    if (await canListen(port) && await canListen(port + 10_000)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Runs a command to its end; fails with its output when it fails. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once(
      "exit",
      (code) =>
        code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${output}`)),
    );
  });
}

/** One inline command's raw answer (the bulk string of CLUSTER INFO), or "" on failure. */
function ask(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = () => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(PING_TIMEOUT_MS, done);
    socket.once("error", done);
    socket.once("connect", () => socket.write(`${command}\r\n`));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      const header = /^\$(\d+)\r\n/.exec(reply);
      if (
        header === null
          ? reply.includes("\r\n")
          : reply.length >= header[0].length + Number(header[1])
      ) {
        done();
      }
    });
  });
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
