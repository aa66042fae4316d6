/**
 * Child process: the ceiling. A bare Hono route that makes one fetch to one provider and returns
 * its JSON; no federated search on Node and Hono can be faster than this.
 */
import { Hono } from "hono";
import { listen } from "../src/runtime/node-listen.ts";
import { envJson, serveIpc } from "./child-ipc.ts";

const provider = envJson<{ url: string }>("BENCH_CEILING_PROVIDER");
const app = new Hono();

app.get("/v1/search", async (c) => {
  const res = await fetch(provider.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      schema_version: "tracefetch.provider-request.v1",
      action: "search",
      query: c.req.query("q") ?? "",
      limit: Number(c.req.query("limit") ?? "8"),
    }),
  });
  return c.json(await res.json());
});

const listening = await listen(app.fetch, "127.0.0.1", 0);
serveIpc({ port: listening.port });
