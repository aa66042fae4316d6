/**
 * The variables of the shared state (docs/deploy.md, "Shared state"): where the store is, how its
 * keys start, how long an operation may take, and the key that hashes searches and callers before
 * they reach it. A message never echoes the URL, which may carry a password.
 */
import { ConfigError } from "../protocol/config-error.ts";
import {
  DEFAULT_STATE_PREFIX,
  DEFAULT_STATE_TIMEOUT_MS,
  MAX_STATE_TIMEOUT_MS,
  MIN_STATE_SECRET_BYTES,
} from "../protocol/state-limits.ts";
import { type Env, integer, readVariables, secretProblem, text, url } from "./env-values.ts";

export type StateVariables = {
  /** TRACEFETCH_STATE_URL: a Redis URL (redis-url.ts); null: no Redis (memory, or a binding). */
  url: string | null;
  /** TRACEFETCH_STATE_PREFIX: what every key of the gateway in the store starts with. */
  prefix: string;
  /** TRACEFETCH_STATE_TIMEOUT_MS: one operation's time before the instance's memory answers. */
  timeoutMs: number;
  /** TRACEFETCH_STATE_SECRET: the HMAC key of keys derived from searches and callers. */
  secret: string | null;
};

/** The shared state's variables, each described by its schema. */
const STATE_VARIABLES = {
  TRACEFETCH_STATE_URL: url({
    kind: "redis",
    example: "redis://127.0.0.1:6379/0 or redis+cluster://10.0.0.1:6379,10.0.0.2:6379",
  }),
  TRACEFETCH_STATE_PREFIX: text,
  TRACEFETCH_STATE_TIMEOUT_MS: integer(1, MAX_STATE_TIMEOUT_MS),
  TRACEFETCH_STATE_SECRET: text,
};

export function stateVariables(env: Env): StateVariables {
  const read = readVariables(env, STATE_VARIABLES);
  const variables: StateVariables = {
    url: read.TRACEFETCH_STATE_URL,
    prefix: read.TRACEFETCH_STATE_PREFIX ?? DEFAULT_STATE_PREFIX,
    timeoutMs: read.TRACEFETCH_STATE_TIMEOUT_MS ?? DEFAULT_STATE_TIMEOUT_MS,
    secret: read.TRACEFETCH_STATE_SECRET,
  };
  if (variables.url !== null) requireStateSecret(variables, "TRACEFETCH_STATE_URL");
  return variables;
}

/**
 * The secret a shared store needs, checked: `store` names what made the store shared (the URL, or
 * a Durable Object binding on Workers).
 */
export function requireStateSecret(variables: StateVariables, store: string): string {
  const { secret } = variables;
  if (secret === null) {
    throw new ConfigError(
      `${store} shares state between instances and needs TRACEFETCH_STATE_SECRET (at least ${MIN_STATE_SECRET_BYTES} bytes), the key that hashes searches before they reach the store`,
    );
  }
  const problem = secretProblem(secret, MIN_STATE_SECRET_BYTES);
  if (problem !== null) throw new ConfigError(`TRACEFETCH_STATE_SECRET ${problem}`);
  return secret;
}
