/**
 * Runs every query of a collection through a real gateway over HTTP: createGateway over a setup's
 * manifest, served by the Node runtime's listener on 127.0.0.1, asked with POST /v1/search. The
 * gateway asks its providers `describe`, as a deployed one does, so the members of a score group
 * that declare `stats` search with the group's summed statistics.
 */
import { createGateway } from "../../src/http/mod.ts";
import { MAX_QUERY_CHARS } from "../../src/protocol/limits.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { nodePorts } from "../../src/runtime/node-fetch.ts";
import { readSettings } from "../../src/config/settings.ts";
import { documentIdOf, type Query } from "./collection.ts";
import type { Setup } from "./setups.ts";

/** Searches in flight at once: enough to keep two cores busy, few enough to stay off any gate. */
const CONCURRENT_SEARCHES = 4;

/**
 * Warm-up searches at most, 20 ms apart, before the judged ones: the gateway describes its
 * providers in the background after its first search, and a score group's members are sent the
 * sums only once it knows they declare `stats`; a second is far more than describe takes here.
 */
const WARM_UP_TRIES = 50;
const WARM_UP_PAUSE_MS = 20;

/** One search's answer: the merged list and each provider's own list, as document ids. */
export type SearchRun = {
  merged: string[];
  byProvider: Map<string, string[]>;
  /** The envelope's code when it was not `ok`. */
  problem?: string;
};

export type SetupRun = {
  setup: string;
  limit: number;
  searches: Map<string, SearchRun>;
  /** Queries cut to the gateway's query limit, at a word boundary. */
  shortened: number;
  failed: number;
};

/** A query longer than the gateway accepts is cut at its last space inside the limit. */
function fitted(text: string): string {
  const points = [...text];
  if (points.length <= MAX_QUERY_CHARS) return text;
  const cut = points.slice(0, MAX_QUERY_CHARS).join("");
  return cut.slice(0, cut.lastIndexOf(" "));
}

type Envelope = {
  code: string;
  result?: {
    merged: Array<{ locator: string }>;
    candidates: Array<{ provider: string; candidates?: Array<{ locator: string }> }>;
  };
};

/**
 * `ready` says when the gateway searches as it will for the judged queries (the score groups'
 * members are sent the sums); until then, up to WARM_UP_TRIES searches of the first query warm it
 * up. A setup without a score group needs none.
 */
export async function runSearches(
  setup: Setup,
  queries: readonly Query[],
  limit: number,
  ready: () => boolean = () => true,
): Promise<SetupRun> {
  const manifest = { schema_version: "tracefetch.providers.v1", providers: setup.providers };
  const settings = readSettings({}).withManifest({ value: manifest, loopback: true });
  const app = createGateway(settings, nodePorts());
  const listening = await listen(app.fetch);
  const url = `http://127.0.0.1:${listening.port}/v1/search`;
  const run: SetupRun = { setup: setup.name, limit, searches: new Map(), shortened: 0, failed: 0 };
  const grouped = setup.providers.some((p) => p.score_group !== undefined);
  let next = 0;
  async function worker() {
    while (next < queries.length) {
      const query = queries[next++] as Query;
      const text = fitted(query.text);
      if (text !== query.text) run.shortened++;
      const res = await fetch(url, {
        method: "POST",
        // The query's id as the request id: a gateway that records traces can be replayed against
        // the judgments (`tracefetch replay --qrels`, which matches a trace by its request id).
        headers: { "content-type": "application/json", "x-request-id": query.id },
        body: JSON.stringify({ query: text, limit }),
      });
      const envelope = await res.json() as Envelope;
      const search: SearchRun = {
        merged: (envelope.result?.merged ?? []).map((m) => documentIdOf(m.locator)),
        byProvider: new Map(
          (envelope.result?.candidates ?? []).map((a) => [
            a.provider,
            (a.candidates ?? []).map((c) => documentIdOf(c.locator)),
          ]),
        ),
      };
      if (envelope.code !== "ok") {
        search.problem = envelope.code;
        run.failed++;
      }
      run.searches.set(query.id, search);
    }
  }
  try {
    const first = queries[0];
    if (grouped && first !== undefined) await warmUp(url, fitted(first.text), limit, ready);
    await Promise.all(Array.from({ length: CONCURRENT_SEARCHES }, worker));
  } finally {
    await listening.close();
  }
  return run;
}

async function warmUp(url: string, query: string, limit: number, ready: () => boolean) {
  for (let i = 0; !ready() && i < WARM_UP_TRIES; i++) {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, limit }),
    });
    await res.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_PAUSE_MS));
  }
}
