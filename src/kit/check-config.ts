/**
 * The configuration checks a provider makes, for flags (Node) and bindings (Workers) alike: each
 * throws a ConfigError naming the flag, its binding and what to fix.
 */
import { ConfigError } from "../protocol/config-error.ts";
import { NAME_PATTERN } from "../protocol/manifest-schema.ts";
import { baseUrlProblem } from "../transport/upstream.ts";

/** A base URL a provider may call: https, or http on a loopback host; no credentials, query or fragment. */
export function checkBaseUrl(flag: string, raw: string | undefined): URL {
  if (!raw) throw new ConfigError(`${flag} is required`);
  const problem = baseUrlProblem(raw, true);
  if (problem !== null) throw new ConfigError(`${flag} ${problem}`);
  const url = new URL(raw);
  // A trailing slash makes relative paths ("search") resolve under the base's own path.
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  return url;
}

/** A provider name or scope as the manifest requires it. */
export function checkName(flag: string, value: string | undefined): string {
  if (!value || !NAME_PATTERN.test(value)) {
    throw new ConfigError(
      `${flag} must match ${NAME_PATTERN} (got ${JSON.stringify(value ?? "")})`,
    );
  }
  return value;
}

/**
 * The name and scope a bridging provider answers as (`--name`/PROVIDER_NAME and
 * `--scope`/PROVIDER_SCOPE), which must equal its manifest entry's; `defaults` when not given.
 */
export function checkIdentity(
  values: { name?: string | undefined; scope?: string | undefined },
  defaults: { name: string; scope: string },
): { name: string; scope: string } {
  return {
    name: checkName("--name (PROVIDER_NAME)", values.name ?? defaults.name),
    scope: checkName("--scope (PROVIDER_SCOPE)", values.scope ?? defaults.scope),
  };
}
