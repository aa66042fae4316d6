/**
 * The shape of a listener, for code that serves a provider without knowing where it runs: Node's
 * (`listen` in the kit's Node part), Deno's, or a test's.
 */

/** A fetch handler, as `serveProvider(...).fetch` is. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A handler being served: the port it got, and how to stop it. */
export type Served = { port: number; close: () => Promise<void> };

/** Serves a handler on `hostname:port` (port 0: a free one) and resolves once it listens. */
export type Listen = (fetch: FetchHandler, hostname: string, port: number) => Promise<Served>;
