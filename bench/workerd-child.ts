/**
 * Child process: the gateway under test in workerd, through Miniflare (never `wrangler dev`): the
 * bundled worker with all its modules, as tests/workerd/miniflare.ts loads it, configured by
 * bindings the way a deployment is. It reports the port workerd listens on and workerd's own
 * process id, so the harness reads workerd's CPU (where every request is served) apart from this
 * Node process's; and it profiles the worker's isolate through workerd's inspector on request.
 */
import { createServer } from "node:net";
import { startWorker } from "../tests/workerd/miniflare.ts";
import { envJson, serveIpc } from "./child-ipc.ts";
import { childPids } from "./cpu.ts";
import { busyMs, InspectorProfiler } from "./inspector.ts";

/** A port nobody listens on now, for workerd's inspector. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const manifest = envJson<unknown>("BENCH_MANIFEST");
const inspectorPort = await freePort();
const mf = await startWorker({
  TRACEFETCH_ALLOW_LOOPBACK: "1",
  TRACEFETCH_MANIFEST: JSON.stringify(manifest),
}, { quiet: true, inspectorPort });
const url = await mf.ready;
const [workerd] = childPids(process.pid, "workerd");
if (workerd === undefined) throw new Error("Miniflare started no workerd process");

/** workerd names the user worker of an unnamed Miniflare worker `core:user:`. */
const profiler = new InspectorProfiler(`ws://127.0.0.1:${inspectorPort}/core:user:`);

serveIpc({ port: Number(url.port), workerd }, {
  "profile-start": async () => {
    await profiler.start();
    return true;
  },
  "profile-stop": async () => ({ busyMs: busyMs(await profiler.stop()) }),
  // Miniflare stops workerd itself on a clean exit.
  "dispose": async () => {
    await mf.dispose();
    return true;
  },
});
