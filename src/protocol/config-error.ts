/** A configuration the gateway refuses to start with; the message says what to fix. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
