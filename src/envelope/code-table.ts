/**
 * The one table that maps every envelope code to its exit code, status, action, retryability and
 * HTTP status (docs/envelope.md, "Codes"). The HTTP layer, the CLI and the streaming `done` event all read it.
 */
import type { EnvelopeAction, EnvelopeCode, EnvelopeStatus } from "../protocol/codes.ts";

export type CodeRow = {
  exit: 0 | 1 | 2 | 3 | 4;
  status: EnvelopeStatus;
  action: EnvelopeAction;
  retryable: boolean;
  /** 0 for codes only the CLI produces. */
  http: number;
};

const usage = (http = 400): CodeRow => ({
  exit: 2,
  status: "usage_error",
  action: "fix_input",
  retryable: false,
  http,
});
const login: CodeRow = {
  exit: 3,
  status: "client_error",
  action: "login",
  retryable: false,
  http: 401,
};
const access: CodeRow = {
  exit: 3,
  status: "client_error",
  action: "check_access",
  retryable: false,
  http: 403,
};
const busy: CodeRow = {
  exit: 3,
  status: "client_error",
  action: "retry",
  retryable: true,
  http: 429,
};

export const CODES = {
  ok: { exit: 0, status: "ok", action: "none", retryable: false, http: 200 },
  partial: { exit: 0, status: "ok", action: "none", retryable: false, http: 200 },
  invalid_json: usage(),
  invalid_utf8: usage(),
  body_too_large: usage(413),
  unsupported_media_type: usage(415),
  unknown_field: usage(),
  null_field: usage(),
  invalid_field: usage(),
  query_empty: usage(),
  query_too_long: usage(),
  limit_out_of_range: usage(),
  timeout_out_of_range: usage(),
  unknown_scope: usage(),
  unknown_provider: usage(),
  unknown_tier: usage(),
  provider_not_in_scope: usage(),
  isolation_conflict: usage(),
  no_providers_selected: usage(),
  not_found: usage(404),
  method_not_allowed: usage(405),
  bad_request: usage(400),
  headers_too_large: usage(431),
  unauthorized: login,
  token_invalid: login,
  token_expired: login,
  forbidden: access,
  insufficient_scope: access,
  overloaded: busy,
  rate_limited: busy,
  // The caller was too slow to send its request; the same request sent promptly can succeed.
  request_timeout: { ...busy, http: 408 },
  // The action (retry or report) depends on whether any failure was retryable: see searchCodeRow.
  all_providers_failed: {
    exit: 4,
    status: "server_error",
    action: "report",
    retryable: false,
    http: 503,
  },
  auth_unavailable: {
    exit: 4,
    status: "server_error",
    action: "retry",
    retryable: true,
    http: 503,
  },
  internal_error: {
    exit: 4,
    status: "server_error",
    action: "report",
    retryable: false,
    http: 500,
  },
  transport_error: {
    exit: 1,
    status: "transport_error",
    action: "retry",
    retryable: true,
    http: 0,
  },
  gateway_timeout: {
    exit: 1,
    status: "transport_error",
    action: "retry",
    retryable: true,
    http: 0,
  },
  bad_gateway_answer: {
    exit: 4,
    status: "server_error",
    action: "report",
    retryable: false,
    http: 0,
  },
  human_decision_required: {
    exit: 3,
    status: "client_error",
    action: "connect",
    retryable: false,
    http: 0,
  },
  // An expand whose locator the provider never issued, or issued for a source that has since changed.
  locator_unknown: usage(404),
  locator_expired: usage(410),
  // The named provider does not implement the action asked (expand, refresh): ask another one.
  action_unsupported: usage(400),
  // The one provider an expand or refresh names failed or could not be contacted; like
  // all_providers_failed, retryable with action `retry` when its failure was.
  provider_failed: {
    exit: 4,
    status: "server_error",
    action: "report",
    retryable: false,
    http: 502,
  },
  // What the instances share could not be reached for a step that must reach every instance (a
  // refresh's cache invalidation): nothing is served as done; the same request may succeed later.
  state_unavailable: {
    exit: 4,
    status: "server_error",
    action: "retry",
    retryable: true,
    http: 503,
  },
  // The operator has not turned fetching on (no `fetch` block in the manifest): no request fixes it.
  fetch_disabled: access,
  // The URL, a redirect's Location or an address its host resolves to is refused by the fetch
  // policy (scheme, credentials, a non-global address, a denied domain): ask for another page.
  url_forbidden: usage(403),
  // The site's robots.txt disallows the page for the gateway's user agent; the page was not asked.
  robots_disallowed: usage(403),
  // More than 5 redirects, or a loop: the page cannot be reached as given.
  too_many_redirects: usage(422),
  // The page is not HTML, XHTML, plain text or markdown.
  unsupported_content_type: usage(422),
  // The page's server failed (5xx, 4xx) or could not be reached; like provider_failed, retryable
  // with action `retry` when its failure was (see codeRow).
  fetch_failed: {
    exit: 4,
    status: "server_error",
    action: "report",
    retryable: false,
    http: 502,
  },
} as const satisfies Record<EnvelopeCode, CodeRow>;

/**
 * The row for a code, adjusted where it depends on the search: `all_providers_failed`,
 * `provider_failed` and `fetch_failed` are retryable, with action `retry`, when any failed attempt
 * was (docs/envelope.md).
 */
export function codeRow(code: EnvelopeCode, anyRetryable = false): CodeRow {
  const row: CodeRow = CODES[code];
  if (
    (code === "all_providers_failed" || code === "provider_failed" || code === "fetch_failed") &&
    anyRetryable
  ) {
    return { ...row, action: "retry", retryable: true };
  }
  return row;
}

/**
 * The codes an HTTP status says by itself, for an answer that is not an envelope (a proxy's own
 * 401, 403 or 429 page): what to do next follows from the status alone.
 */
const SAID_BY_STATUS = ["unauthorized", "forbidden", "rate_limited"] as const;

/** The code a bare status means by this table, or null when a status alone says nothing. */
export function codeOfStatus(http: number): (typeof SAID_BY_STATUS)[number] | null {
  return SAID_BY_STATUS.find((code) => CODES[code].http === http) ?? null;
}
