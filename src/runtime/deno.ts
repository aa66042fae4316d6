/**
 * Deno entry (`deno task dev`): the environment parsed once, then the shared launcher over
 * Deno.serve, with the same variables as `npm start`.
 */
import { parseCidr } from "../io/ip-rules.ts";
import { ConfigError } from "../protocol/config-error.ts";
import { readSettings } from "../config/settings.ts";
import { launch, type Listen } from "./launch.ts";

/** Deno.serve hands the handler its ServeInfo (launch.ts), the peer's address within. */
const listen: Listen = (fetch, hostname, port) =>
  new Promise((resolve) => {
    const server = Deno.serve({
      hostname,
      port,
      onListen: (addr) =>
        resolve({ port: (addr as Deno.NetAddr).port, close: () => server.shutdown() }),
    }, fetch);
  });

try {
  const running = await launch(readSettings(Deno.env.toObject(), { parseCidr }), listen);
  for (const line of running.warnings) console.error(`tracefetch: warning: ${line}`);
  console.log(`TraceFetch Edge listening on ${running.url} (${running.manifestSource})`);
  Deno.addSignalListener("SIGINT", () => void running.close().then(() => Deno.exit(0)));
} catch (error) {
  if (
    error instanceof ConfigError || error instanceof Deno.errors.NotFound ||
    error instanceof Deno.errors.AddrInUse
  ) {
    console.error(`tracefetch: ${(error as Error).message}`);
    Deno.exit(2);
  }
  throw error;
}
