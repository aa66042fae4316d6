/**
 * Auth: verifies caller tokens, mints the token a provider receives for an attempt, and verifies
 * that token on the provider's side (verifyGatewayToken, for provider authors), all with jose
 * (docs/security.md).
 *
 * Boundary: decides who a caller is (what a caller may see is the planner's rule, in
 * src/core/caller.ts), and signs and checks what providers receive; it never plans a search, never
 * forwards a caller's credentials and never reads a variable (src/config hands it its settings).
 *
 * Invariants:
 * - A presented token that fails verification is refused, never treated as anonymous.
 * - Algorithms are pinned; `alg: none`, a token's own key (jwk, jku, x5u, x5c) and HS256 without a
 *   configured secret are never accepted.
 * - Sensitive providers are invisible to callers not entitled to their scope.
 * - A provider token has exactly one audience, a unique jti, and expires just past its attempt.
 */
export * from "./jwk-set.ts";
export * from "./provider-token-signer.ts";
export * from "./verify-caller.ts";
export * from "./verify-gateway-token.ts";
