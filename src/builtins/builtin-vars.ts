/**
 * The variables the remote built-ins read. With none of them set no remote built-in is made, so a
 * composition root need not load the built-ins' code at all (src/gateway/remote-builtins.ts).
 */
export const BUILTIN_VARS = {
  exaKey: "EXA_API_KEY",
  exaBaseUrl: "EXA_BASE_URL",
  githubToken: "GITHUB_TOKEN",
  githubBaseUrl: "GITHUB_API_URL",
} as const;
