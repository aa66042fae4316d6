/**
 * Child process: the gateway under test in workerd, through Miniflare (never `wrangler dev`): the
 * bundled worker with all its modules, as tests/workerd/miniflare.ts loads it, configured by
 * bindings the way a deployment is. It reports the port workerd listens on and workerd's own
 * process id, so the harness reads workerd's CPU (where every request is served) apart from this
 * Node process's.
 */
import { startWorker } from "../tests/workerd/miniflare.ts";
import { envJson, serveIpc } from "./child-ipc.ts";
import { childPids } from "./cpu.ts";

const manifest = envJson<unknown>("BENCH_MANIFEST");
const mf = await startWorker({
  TRACEFETCH_ALLOW_LOOPBACK: "1",
  TRACEFETCH_MANIFEST: JSON.stringify(manifest),
}, { quiet: true });
const url = await mf.ready;
const [workerd] = childPids(process.pid, "workerd");
if (workerd === undefined) throw new Error("Miniflare started no workerd process");

serveIpc({ port: Number(url.port), workerd }, {
  // Miniflare stops workerd itself on a clean exit.
  "dispose": async () => {
    await mf.dispose();
    return true;
  },
});
