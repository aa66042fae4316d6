/** The grammar of a JWK Set as an operator writes one into a variable: JSON, one key or a set. */
import { ConfigError } from "../protocol/config-error.ts";
import { isRecord } from "../protocol/json-value.ts";

/** A JWK Set, or a single JWK taken as a set of one. */
export function parseJwks(name: string, text: string): { keys: Record<string, unknown>[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(`${name} is not JSON`);
  }
  const keys = isRecord(value) && Array.isArray(value.keys)
    ? value.keys
    : isRecord(value)
    ? [value]
    : null;
  if (keys === null || keys.length === 0 || !keys.every(isRecord)) {
    throw new ConfigError(
      `${name} must be a JWK or a JWK Set ({"keys": [...]}) with at least one key`,
    );
  }
  for (const key of keys) {
    if (typeof key.kty !== "string") throw new ConfigError(`${name}: every key needs a "kty"`);
  }
  return { keys };
}
