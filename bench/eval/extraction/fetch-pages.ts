/**
 * The benchmark's pages through `POST /v1/fetch` with `format: "text"`: each page is served as
 * crawled (its bytes, `text/html` with no charset, so the fetch sniffs the encoding) by a site on
 * 127.0.0.1, and fetched through a gateway built in this process over Node's fetch parts, its
 * manifest opening that one address. What comes back is `result.evidence.text`, as a caller gets it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readSettings } from "../../../src/config/settings.ts";
import { createGateway } from "../../../src/http/create-gateway.ts";
import { parseCidr } from "../../../src/io/ip-rules.ts";
import { MAX_FETCH_CHARS } from "../../../src/protocol/fetch-limits.ts";
import { nodeFetchParts } from "../../../src/runtime/node-evidence.ts";
import { nodePorts } from "../../../src/runtime/node-fetch.ts";

export type PageFetcher = {
  /** The text `/v1/fetch` answers for the page `id`. */
  text: (id: string) => Promise<string>;
  close: () => Promise<void>;
};

export async function fetchPages(pages: ReadonlyMap<string, Uint8Array>): Promise<PageFetcher> {
  const server = createServer((req, res) => {
    const page = pages.get((req.url ?? "").slice(1));
    if (page === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here");
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const manifest = {
    schema_version: "tracefetch.providers.v1",
    // A manifest names a provider; this one is never asked.
    providers: [{ name: "unused", endpoint: `${base}/provider`, scope: "extraction" }],
    fetch: { allow_private_cidrs: ["127.0.0.1/32"] },
  };
  const read = readSettings({ TRACEFETCH_API_DOCS: "0" }, { parseCidr });
  const app = createGateway(read.withManifest({ value: manifest, loopback: true }), {
    ...nodePorts(),
    evidence: nodeFetchParts(),
  });
  return {
    text: async (id) => {
      const res = await app.request("/v1/fetch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          url: `${base}/${id}`,
          format: "text",
          max_chars: MAX_FETCH_CHARS,
          max_age_seconds: 0,
        }),
      });
      const answer = await res.json() as {
        code?: string;
        result?: { evidence?: { text?: string } };
      };
      if (answer.code !== "ok") throw new Error(`fetching page ${id} answered ${answer.code}`);
      return answer.result?.evidence?.text ?? "";
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
