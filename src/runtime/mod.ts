/**
 * Runtime: the code that knows where it runs. node.ts (`npm start`), deno.ts (`deno task dev`)
 * and worker.ts (Cloudflare Workers) each read their environment, build the gateway and serve it;
 * launch.ts is what Node and Deno share; node-listen.ts and node-fetch.ts are Node's listener and
 * its client for providers.
 *
 * Boundary: composition only. Settings come from readSettings (src/config), answers from
 * createGateway (src/http); nothing here decides a search or reads a variable by itself.
 *
 * Invariants:
 * - A configuration the gateway refuses stops the start with one line and exit status 2 (Node,
 *   Deno); a Worker, which has no start, answers every request with a 500 internal_error envelope
 *   naming what to fix.
 * - Every answer is an envelope, including the ones Node's parser would write by itself.
 * - The entries (node.ts, deno.ts, worker.ts) are not exported: importing them starts a server.
 */
export * from "./launch.ts";
export * from "./node-fetch.ts";
export * from "./node-listen.ts";
