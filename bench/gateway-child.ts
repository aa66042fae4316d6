/**
 * Child process: the gateway under test, exactly as a deployment builds it: createGateway with a
 * manifest of the benchmark's provider servers (allowLoopback, since they are on 127.0.0.1), served
 * by the project's own `listen`. Every validation and bound stays on.
 *
 * It watches (read only) the sockets undici opens, through undici's diagnostics channel, so the
 * memory scenario can tell how many bytes the gateway really read from a provider's socket.
 * For `npm run bench -- --profile` it can also run the V8 CPU profiler over a window the parent
 * chooses (`profile-start` / `profile-stop`), so start-up and module loading stay out of the profile.
 */
import { subscribe } from "node:diagnostics_channel";
import { Session } from "node:inspector/promises";
import type { Socket } from "node:net";
import { createGateway } from "../src/http/create-gateway.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { readSettings } from "../src/config/settings.ts";
import { envJson, serveIpc } from "./child-ipc.ts";

const manifest = envJson<unknown>("BENCH_MANIFEST");
// As `npm start` runs it: providers are called through the Node runtime's undici-based client.
const app = createGateway(
  readSettings({}).withManifest({ value: manifest, loopback: true }),
  nodePorts(),
);
const listening = await listen(app.fetch, "127.0.0.1", 0);

/** Every socket fetch opened to each provider port, and bytesRead of each at the last mark. */
const sockets = new Map<number, Socket[]>();
const marks = new WeakMap<Socket, number>();
subscribe("undici:client:connected", (message) => {
  const socket = (message as { socket?: Socket }).socket;
  const port = socket?.remotePort;
  if (socket === undefined || port === undefined) return;
  sockets.set(port, [...(sockets.get(port) ?? []), socket]);
});

let session: Session | null = null;

serveIpc({ port: listening.port }, {
  "socket-mark": () => {
    for (const list of sockets.values()) for (const s of list) marks.set(s, s.bytesRead);
    return true;
  },
  /** Bytes read from a port's sockets since the mark (undici may open a spare socket early). */
  "socket-read": (port) => {
    const used = (sockets.get(port as number) ?? [])
      .map((s) => ({ s, read: s.bytesRead - (marks.get(s) ?? 0) }))
      .filter((u) => u.read > 0);
    return {
      sockets: used.length,
      bytesRead: used.reduce((sum, u) => sum + u.read, 0),
      closed: used.every((u) => u.s.destroyed),
    };
  },
  "profile-start": async () => {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
    return true;
  },
  "profile-stop": async () => {
    if (session === null) throw new Error("the profiler was not started");
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    session = null;
    return profile;
  },
});
