/**
 * Config: what a gateway is built from. The environment (HOST, PORT, TRACEFETCH_*, the built-ins'
 * keys) and the manifest's location and secrets are described here as valibot schemas and read
 * once, by a composition root (src/runtime/*, src/cli), into one typed Settings; with the
 * runtime's ports they resolve into the configuration a gateway runs with (keys imported, the
 * trace sink chosen, one client and one gate per provider).
 *
 * Boundary: nothing below the roots reads an environment, and nothing outside this folder parses a
 * setting. No search runs here; the gateway takes the resolved configuration and runs searches.
 *
 * Invariants:
 * - One grammar per kind (env-values.ts): booleans accept 1/true/yes/on and 0/false/no/off in any
 *   case, numbers are integers in range, an empty value is unset, and anything else stops the
 *   start with one line naming the variable. One URL check and one secret check serve every
 *   variable of their kind; a message never echoes a secret or a URL that may carry a password.
 * - A TRACEFETCH_* name no root reads but that is a likely slip for one is ignored and said at
 *   start with the name it most likely meant (a warning, not a refusal: test harnesses and the
 *   CLI set names of their own), through the one `did you mean` an unknown manifest field gets
 *   (src/protocol/did-you-mean.ts).
 * - Secrets are read by name only: the built-ins' keys, and the `auth: bearer` secrets by the name
 *   the manifest gives.
 * - A configuration that cannot work is refused at start, never on the first request.
 */
export * from "./settings.ts";
export * from "./env-values.ts";
export * from "./gateway-config.ts";
export * from "./start-problems.ts";
