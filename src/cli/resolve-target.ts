/**
 * Which gateway a command talks to and which token goes with it. The token never crosses plain
 * http to a host that is not loopback: such a target is refused before anything is sent.
 */
import type { RequestProblem } from "../protocol/search-request.ts";
import { endpointProblem, isLoopbackHost, keepsSecretsInTransit } from "../protocol/url-policy.ts";
import { readSavedConnection, type SavedState } from "./saved-connection.ts";

/** Where `npm start` listens. */
export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:8787";
/** The token variable when no saved connection names another. */
export const DEFAULT_TOKEN_ENV = "TRACEFETCH_TOKEN";

export type Target = {
  /** The gateway's base URL, ending in `/` so routes resolve beneath any path prefix. */
  base: URL;
  /** The token to send, or null for an anonymous call. */
  token: string | null;
  /** Which variable the token came from (or would have). */
  tokenEnv: string;
  source: "flag" | "saved" | "default";
};

export type TargetResult =
  | { ok: true; target: Target; saved: SavedState }
  | { ok: false; refused: Refusal; problem: RequestProblem; saved: SavedState };

/** Why no target: the URL given, the saved connection, or the token's way there. */
export type Refusal = "gateway_url" | "saved_connection" | "token_transport";

/** A gateway URL a person typed, checked by the one URL policy (src/protocol/url-policy.ts). */
export function parseGatewayUrl(
  text: string,
): { ok: true; url: URL } | { ok: false; message: string } {
  const problem = endpointProblem(text, true, "gateway");
  if (problem !== null) {
    // A URL that does not parse is echoed (a mistyped flag is easier to see); one that does may
    // carry credentials, so it is not.
    return {
      ok: false,
      message: URL.canParse(text)
        ? `the gateway URL ${problem}`
        : `the gateway URL "${text}" ${problem} (e.g. https://gateway.example)`,
    };
  }
  const url = new URL(text);
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  return { ok: true, url };
}

/** How a base URL is shown and saved: without the trailing slash. */
export function displayUrl(base: URL): string {
  return base.href.replace(/\/$/, "");
}

/** Why a token may not go to this URL, or null when it may. */
export function tokenTransportProblem(base: URL, tokenEnv: string): string | null {
  if (keepsSecretsInTransit(base)) return null;
  return `refusing to send the token in ${tokenEnv} over plain http to ${base.host}: ` +
    `use an https: gateway URL, or unset ${tokenEnv} to call it anonymously`;
}

/**
 * What to suggest when a gateway cannot be reached: on this machine, starting one; for a search,
 * also searching in process, which needs no gateway.
 */
export function unreachableHint(base: URL, search: boolean): string {
  const local = isLoopbackHost(base.hostname)
    ? "start one with npm start (in the tracefetch-edge checkout)"
    : "check the URL (--gateway, or the one tracefetch connect saved)";
  return search ? `${local}, or search in process with --manifest FILE` : local;
}

export async function resolveTarget(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): Promise<TargetResult> {
  const saved = await readSavedConnection(env);
  // Every refusal is about the gateway to call: the field to fix is always `gateway`.
  const refuse = (refused: Refusal, message: string): TargetResult => ({
    ok: false,
    refused,
    saved,
    problem: { code: "invalid_field", field: "gateway", message },
  });
  let base: URL;
  let source: Target["source"];
  let tokenEnv = DEFAULT_TOKEN_ENV;
  if (flag !== undefined) {
    const parsed = parseGatewayUrl(flag);
    if (!parsed.ok) return refuse("gateway_url", parsed.message);
    base = parsed.url;
    source = "flag";
    // A saved token variable belongs to the saved gateway; another gateway gets only the default.
    if (saved.kind === "saved" && displayUrl(base) === saved.connection.gateway) {
      tokenEnv = saved.connection.token_env;
    }
  } else if (saved.kind === "saved") {
    const parsed = parseGatewayUrl(saved.connection.gateway);
    if (!parsed.ok) return refuse("saved_connection", `the saved connection: ${parsed.message}`);
    base = parsed.url;
    source = "saved";
    tokenEnv = saved.connection.token_env;
  } else if (saved.kind === "broken") {
    return refuse(
      "saved_connection",
      `the saved connection ${saved.path} ${saved.message}; run tracefetch connect ` +
        "again, or pass --gateway",
    );
  } else {
    base = new URL(`${DEFAULT_GATEWAY_URL}/`);
    source = "default";
  }
  const token = env[tokenEnv]?.trim() || null;
  if (token !== null) {
    const problem = tokenTransportProblem(base, tokenEnv);
    if (problem !== null) return refuse("token_transport", problem);
  }
  return { ok: true, saved, target: { base, token, tokenEnv, source } };
}
