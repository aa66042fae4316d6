/**
 * One request to a judged URL: its host resolved (unless it is an address), every address checked,
 * and the request sent to a checked address, never to the name.
 */
import { addressText, type IpAddress } from "../io/ip-rules.ts";
import type {
  Connected,
  FetchDeps,
  FetchFailure,
  FetchPolicy,
  FetchRefusal,
} from "./fetch-types.ts";
import { judgeAddresses, type JudgedUrl } from "./judge-url.ts";

export type Answered = Extract<Connected, { ok: true }>;

export type Hop =
  | { ok: true; url: URL; response: Answered }
  | { ok: false; outcome: FetchRefusal | FetchFailure };

/** Sends a GET for a URL judgeUrl accepted, with `headers`, under `signal`. */
export async function sendJudged(
  judged: Extract<JudgedUrl, { ok: true }>,
  policy: FetchPolicy,
  deps: FetchDeps,
  signal: AbortSignal,
  headers: Readonly<Record<string, string>>,
): Promise<Hop> {
  const { url, host } = judged;
  let addresses: IpAddress[];
  if (host.kind === "address") {
    addresses = [host.address];
  } else {
    const resolved = await resolveSafely(deps, host.name, signal);
    if (signal.aborted) return { ok: false, outcome: abortFailure(signal) };
    if (!resolved.ok) {
      return {
        ok: false,
        outcome: failure(resolved.reason === "dns_failure", "dns_failure", resolved.message),
      };
    }
    const checked = judgeAddresses(host.name, resolved.addresses, policy);
    if (!checked.ok) {
      return {
        ok: false,
        outcome: { outcome: "refused", code: "url_forbidden", message: checked.message },
      };
    }
    addresses = checked.addresses;
  }
  let last: Extract<Connected, { ok: false }> | null = null;
  // The next checked address is tried only when one cannot be reached (an IPv6 address without
  // an IPv6 route); any answer, or any other failure, ends the hop.
  // A connector that cannot pin goes by name: one request, never one per address.
  for (const address of deps.connector.pinsAddress ? addresses : addresses.slice(0, 1)) {
    const sent = await deps.connector.send({ url, address: addressText(address), headers, signal });
    if (sent.ok) return { ok: true, url, response: sent };
    last = sent;
    if (sent.reason !== "unreachable") break;
  }
  if (signal.aborted) return { ok: false, outcome: abortFailure(signal) };
  const reason = last?.reason ?? "failed";
  return {
    ok: false,
    outcome: failure(reason !== "cancelled", reason, last?.message ?? "nothing was sent"),
  };
}

async function resolveSafely(deps: FetchDeps, name: string, signal: AbortSignal) {
  try {
    return await deps.resolve(name, signal);
  } catch {
    return {
      ok: false as const,
      reason: "dns_failure" as const,
      message: `DNS failed for ${name}`,
    };
  }
}

/** The failure of a fetch whose signal fired: its timeout (retryable) or the caller's cancel. */
export function abortFailure(signal: AbortSignal): FetchFailure {
  const timeout = (signal.reason as Error | undefined)?.name === "TimeoutError";
  return timeout
    ? failure(true, "timeout", "the page did not answer in full before the fetch's timeout")
    : failure(false, "cancelled", "the fetch was cancelled");
}

export function failure(
  retryable: boolean,
  reason: FetchFailure["reason"],
  message: string,
  status_code: number | null = null,
): FetchFailure {
  return { outcome: "failed", code: "fetch_failed", reason, status_code, retryable, message };
}
