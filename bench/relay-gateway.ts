/**
 * Child process, for comparison only: the relay, the least a federating process can do. It takes
 * the search, makes the same calls to every provider through undici's `request` over keep-alive
 * connections, and answers with their bodies as they came, in one JSON array: no parsing, no
 * checks, no fusion. What it adds over the client's own calls is what one more process and one
 * more HTTP exchange cost on this machine, which no gateway can go below.
 */
import { Hono } from "hono";
import { Agent, request } from "undici";
import { listen } from "../src/runtime/node-listen.ts";
import { envJson, serveIpc } from "./child-ipc.ts";

const providers = envJson<Array<{ url: string }>>("BENCH_RELAY_PROVIDERS");
const agent = new Agent();
const app = new Hono();

app.get("/v1/search", async (c) => {
  const body = JSON.stringify({
    schema_version: "tracefetch.provider-request.v1",
    action: "search",
    query: c.req.query("q") ?? "",
    limit: Number(c.req.query("limit") ?? "8"),
  });
  const answers = await Promise.all(providers.map(async ({ url }) => {
    const res = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      dispatcher: agent,
    });
    return await res.body.text();
  }));
  return c.body(`[${answers.join(",")}]`, 200, { "content-type": "application/json" });
});

const listening = await listen(app.fetch, "127.0.0.1", 0);
serveIpc({ port: listening.port });
