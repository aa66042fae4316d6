/**
 * Runs every query of a collection through a real gateway over HTTP: createGateway over a setup's
 * manifest, served by the Node runtime's listener on 127.0.0.1, asked with POST /v1/search.
 */
import { createGateway } from "../../src/http/mod.ts";
import { MAX_QUERY_CHARS } from "../../src/protocol/limits.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { nodePorts } from "../../src/runtime/node-fetch.ts";
import { readSettings } from "../../src/gateway/settings.ts";
import { documentIdOf, type Query } from "./collection.ts";
import type { Setup } from "./setups.ts";

/** Searches in flight at once: enough to keep two cores busy, few enough to stay off any gate. */
const CONCURRENT_SEARCHES = 4;

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

export async function runSearches(
  setup: Setup,
  queries: readonly Query[],
  limit: number,
): Promise<SetupRun> {
  const manifest = { schema_version: "tracefetch.providers.v1", providers: setup.providers };
  const settings = readSettings({}).withManifest({ value: manifest, loopback: true });
  const app = createGateway({ ...settings, describeProviders: false }, nodePorts());
  const listening = await listen(app.fetch);
  const url = `http://127.0.0.1:${listening.port}/v1/search`;
  const run: SetupRun = { setup: setup.name, limit, searches: new Map(), shortened: 0, failed: 0 };
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
    await Promise.all(Array.from({ length: CONCURRENT_SEARCHES }, worker));
  } finally {
    await listening.close();
  }
  return run;
}
