/**
 * The kit's Node part, published as `tracefetch-edge/kit/node`: a provider's command line
 * (serveCli) and the listener it serves on (listen), over Node's HTTP server.
 *
 * Boundary: Node only, and nothing of the gateway: a provider served here depends on the kit
 * (src/kit/mod.ts) and the protocol alone.
 */
export * from "./listen.ts";
export * from "./serve-cli.ts";
