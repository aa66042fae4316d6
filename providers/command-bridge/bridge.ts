/**
 * The command bridge: one HTTP provider endpoint (`POST /<name>`) per command provider of a
 * TraceFetch 1.0 manifest, each a commandAdapter served by serveProvider.
 *
 * Output the protocol cannot accept is served as the child wrote it, with 200 and
 * `application/json`: a provider-error body has no code for a protocol error, and
 * the gateway's strict checks then report exactly what 1.0 reported, `provider_protocol_error`
 * with the precise code (body_too_large, invalid_utf8, invalid_json, schema_violation,
 * identity_mismatch). Every other failure is a provider-error body.
 */
import type { ChildProcess } from "node:child_process";
import { PROVIDER_ERROR_VERSION, type SearchAdapter, serveProvider } from "../../src/kit/mod.ts";
import {
  commandAdapter,
  hasExited,
  KILL_GRACE_MS,
  terminate,
  UnusableOutput,
} from "./command-adapter.ts";
import type { CommandProvider } from "./command-manifest.ts";

export type CommandBridge = {
  fetch: (request: Request) => Promise<Response>;
  /** Ends every child still running (SIGTERM, then SIGKILL after the grace period); resolves once all are gone. */
  stop: () => Promise<void>;
};

export function commandBridge(
  providers: readonly CommandProvider[],
  options: { graceMs?: number } = {},
): CommandBridge {
  const live = new Set<ChildProcess>();
  const adapters = new Map<string, SearchAdapter>();
  for (const p of providers) {
    adapters.set(p.name, commandAdapter(p, { live, ...options }));
  }
  return {
    async fetch(request) {
      const name = new URL(request.url).pathname.replace(/^\/+|\/+$/g, "");
      const adapter = adapters.get(name);
      if (adapter === undefined) {
        return Response.json({
          schema_version: PROVIDER_ERROR_VERSION,
          code: "invalid_request",
          message: `no provider at this path; this bridge serves ${
            [...adapters.keys()].map((n) => `/${n}`).join(", ")
          }`,
        }, { status: 404 });
      }
      // Per request, so the unusable output is this request's and nobody else's.
      const seen: { unusable?: UnusableOutput } = {};
      const app = serveProvider({
        name: adapter.name,
        scope: adapter.scope,
        search: (req, signal) =>
          adapter.search(req, signal).catch((error: unknown) => {
            if (error instanceof UnusableOutput) seen.unusable = error;
            throw error;
          }),
      });
      const response = await app.fetch(request);
      if (seen.unusable === undefined) return response;
      await response.body?.cancel().catch(() => {});
      // slice(): a copy backed by a plain ArrayBuffer, the kind of buffer a Response body takes.
      return new Response(seen.unusable.stdout.slice(), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    },
    async stop() {
      const gone = [...live].map((child) =>
        new Promise<void>((done) => {
          child.once("exit", () => done());
          if (hasExited(child)) done();
        })
      );
      for (const child of live) terminate(child, options.graceMs ?? KILL_GRACE_MS);
      await Promise.all(gone);
    },
  };
}
