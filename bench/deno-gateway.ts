/**
 * Deno child process (`deno run` with the flags of `deno task dev`): the gateway under test as
 * `src/runtime/deno.ts` serves it, createGateway over Deno.serve with Deno's own fetch for the
 * providers, every validation and bound on. It prints one ready line with its port on stdout and
 * exits when its stdin closes, so it never outlives the harness. Typed through `globalThis` so the
 * Node type check reads it too.
 */
import { createGateway } from "../src/http/create-gateway.ts";
import { readSettings } from "../src/config/settings.ts";

type DenoApi = {
  env: { get(name: string): string | undefined };
  serve(
    options: { hostname: string; port: number; onListen: (addr: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): unknown;
  stdin: { readable: ReadableStream<Uint8Array> };
  exit(code: number): never;
};

const deno = (globalThis as unknown as { Deno: DenoApi }).Deno;
const manifest: unknown = JSON.parse(deno.env.get("BENCH_MANIFEST") ?? "null");
const app = createGateway(readSettings({}).withManifest({ value: manifest, loopback: true }));
deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ type: "ready", info: { port } })),
}, app.fetch);

// The parent closed our stdin (it stopped us, or it is gone): never linger.
for await (const _ of deno.stdin.readable) {
  // Nothing is sent on stdin; reading only waits for its end.
}
deno.exit(0);
