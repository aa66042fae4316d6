/**
 * Child process, for comparison only: the naive federated search most of us would write first.
 * `Promise.all` of `fetch` + `res.json()` to every provider, then concat, dedupe by exact locator and
 * sort by rank. No deadline, no byte cap, no schema check, no sanitising, no in-flight limit.
 */
import { Hono } from "hono";
import { listen } from "../src/runtime/node-listen.ts";
import { envJson, serveIpc } from "./child-ipc.ts";

type Provider = { name: string; url: string };
type Candidate = { title: string; locator: string; snippet?: string };
type Ranked = Candidate & { provider: string; rank: number };

const providers = envJson<Provider[]>("BENCH_NAIVE_PROVIDERS");
const app = new Hono();

app.get("/v1/search", async (c) => {
  const query = c.req.query("q") ?? "";
  const limit = Number(c.req.query("limit") ?? "8");
  const answers = await Promise.all(providers.map(async (p) => {
    const res = await fetch(p.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        schema_version: "tracefetch.provider-request.v1",
        action: "search",
        query,
        limit,
      }),
    });
    const body = (await res.json()) as { candidates: Candidate[] };
    return body.candidates.map((cand, i): Ranked => ({ ...cand, provider: p.name, rank: i + 1 }));
  }));
  const seen = new Set<string>();
  const merged: Ranked[] = [];
  for (const cand of answers.flat()) {
    if (seen.has(cand.locator)) continue;
    seen.add(cand.locator);
    merged.push(cand);
  }
  merged.sort((a, b) => a.rank - b.rank);
  return c.json({ query, merged: merged.slice(0, limit) });
});

const listening = await listen(app.fetch, "127.0.0.1", 0);
serveIpc({ port: listening.port });
