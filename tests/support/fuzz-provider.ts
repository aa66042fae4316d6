/**
 * The provider-answer fuzz: fast-check generates whole HTTP answers of a provider (interim and
 * final statuses, headers, framing, content encodings, bodies, truncations, resets and hangs), a
 * raw node:net server plays each one byte for byte, and one search through a gateway with that
 * provider next to a healthy one must stay inside every promise of docs/protocol.md and
 * docs/envelope.md. Node, Deno and workerd share this generator, this server and these assertions.
 *
 * The pieces: fuzz-secrets.ts (what must never leak), fuzz-answer.ts (the shape of an answer),
 * fuzz-text-arbitraries.ts, fuzz-body-arbitraries.ts and fuzz-arbitraries.ts (the generator),
 * fuzz-render.ts (an answer's bytes), fuzz-server.ts (the provider servers), fuzz-oracle.ts (the
 * expected outcome), fuzz-assert.ts (the assertions on a search) and fuzz-run.ts (the runner).
 */
export { SECRETS } from "./fuzz-secrets.ts";
export {
  type BodySpec,
  type Codec,
  type EncodingSpec,
  type EndingSpec,
  type FramingSpec,
  type FuzzAnswer,
  FUZZED,
  HEALTHY_NAME,
  type Json,
  type Mutation,
  type WireCandidateSpec,
} from "./fuzz-answer.ts";
export { fuzzAnswer } from "./fuzz-arbitraries.ts";
export { plainBody, render, type Rendered, toJson } from "./fuzz-render.ts";
export {
  DEADLINE_MS,
  fuzzProviderEntries,
  type FuzzProviders,
  HANG_DEADLINE_MS,
  type Played,
  searchQuery,
  startFuzzProviders,
} from "./fuzz-server.ts";
export { type Expectation, expectationOf, expectationsOf } from "./fuzz-oracle.ts";
export { assertSearch, type Exchange } from "./fuzz-assert.ts";
export { countCrashes, type FuzzSettings, fuzzSettings, runProviderFuzz } from "./fuzz-run.ts";
