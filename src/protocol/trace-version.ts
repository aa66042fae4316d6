/**
 * The names a search trace travels under (docs/security.md, "Search traces"), apart from its schema
 * so that a provider's token check can name the trace type without loading the schema.
 */

export const TRACE_VERSION = "tracefetch.trace.v1";

/** What one sink write carries: several traces, in the order they were recorded. */
export const TRACE_BATCH_VERSION = "tracefetch.trace-batch.v1";

/**
 * The `typ` of a webhook batch's JWS header. Provider tokens are `typ: JWT`, and
 * verifyGatewayToken refuses this type, so a signed trace never passes as a provider token.
 */
export const TRACE_JWS_TYPE = "tracefetch-trace+jws";
