/**
 * Node entry (`npm start`): the environment parsed once, then the shared launcher over
 * @hono/node-server with Node's ports. A configuration problem exits with status 2 and one clear
 * line.
 */
import { parseCidr } from "../io/ip-rules.ts";
import { ConfigError } from "../protocol/config-error.ts";
import { readSettings } from "../config/settings.ts";
import { launch } from "./launch.ts";
import { listen } from "./node-listen.ts";
import { nodePorts } from "./node-fetch.ts";

/**
 * Last resort: an error that escaped every handler is logged and counted rather than ending the
 * process and every search in flight with it. This is not how faults are handled (each has its own
 * handler and test); the soak run fails when this line ever appears.
 */
let escaped = 0;
const onEscape = (kind: string) => (error: unknown) => {
  escaped++;
  console.error(`tracefetch: escaped error #${escaped} (${kind}):`, error);
};
process.on("uncaughtException", onEscape("uncaughtException"));
process.on("unhandledRejection", onEscape("unhandledRejection"));

try {
  const running = await launch(readSettings(process.env, { parseCidr }), listen, nodePorts());
  for (const line of running.warnings) console.error(`tracefetch: warning: ${line}`);
  console.log(`TraceFetch Edge listening on ${running.url} (${running.manifestSource})`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  if (
    error instanceof ConfigError || code === "ENOENT" || code === "EADDRINUSE" || code === "EACCES"
  ) {
    console.error(`tracefetch: ${(error as Error).message}`);
    process.exit(2);
  }
  throw error;
}
