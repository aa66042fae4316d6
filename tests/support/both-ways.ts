/**
 * Runs a check against one adapter both ways the gateway reaches a provider: in process, and over
 * HTTP (serveProvider on 127.0.0.1 and the gateway's HTTP client), so the two cannot drift apart.
 */
import { serveProvider } from "../../src/kit/serve-provider.ts";
import type { SearchAdapter } from "../../src/protocol/provider-contract.ts";
import { exchangeOverFetch } from "../../src/io/provider-exchange.ts";
import { httpProvider } from "../../src/transport/http-provider.ts";
import { inProcessProvider } from "../../src/transport/in-process-provider.ts";
import type { ProviderClient } from "../../src/transport/provider-client.ts";
import { listen } from "../../src/runtime/node-listen.ts";

export async function bothWays(
  adapter: SearchAdapter,
  run: (client: ProviderClient, how: string) => Promise<void>,
): Promise<void> {
  await run(inProcessProvider(adapter), "in process");
  const server = await listen(serveProvider(adapter).fetch, "127.0.0.1", 0);
  try {
    await run(
      httpProvider({
        name: adapter.name,
        scope: adapter.scope,
        endpoint: `http://127.0.0.1:${server.port}/search`,
        exchange: exchangeOverFetch(fetch),
        now: () => Date.now(),
      }),
      "over HTTP",
    );
  } finally {
    await server.close();
  }
}
