/**
 * The shapes of one fetch: what is asked, under which policy, with which runtime parts, and what
 * comes back (docs/envelope.md, "Fetching a page").
 */
import type { EvidenceRoute, FetchFormat } from "../protocol/codes.ts";
import type { CidrRange } from "../io/ip-rules.ts";
import type { RobotsCache } from "./robots-cache.ts";

/** A fetch request, defaults applied (the route parses and bounds it; fetch-limits.ts). */
export type FetchRequest = {
  url: string;
  /** `markdown` (the default) or `text`: the same main content with no markup. */
  format: FetchFormat;
  /** 1 to MAX_FETCH_CHARS, default DEFAULT_FETCH_CHARS. */
  max_chars: number;
  /** The whole fetch (robots.txt, redirects, body); default DEFAULT_FETCH_TIMEOUT_MS. */
  timeout_ms: number;
};

/** The manifest's `fetch` block, read (fetchPolicyOf); null when the manifest has none. */
export type FetchPolicy = {
  /** Private ranges pages may come from; every other address must be global unicast. */
  allowPrivate: readonly CidrRange[];
  /** Never fetched, with every name under them; wins over allowDomains. */
  denyDomains: readonly string[];
  /** When not empty, the only domains fetched (with every name under them). */
  allowDomains: readonly string[];
};

/** What a host name resolves to: every address of its A and AAAA answers, as written. */
export type Resolved =
  | { ok: true; addresses: readonly string[] }
  | { ok: false; reason: "no_address" | "dns_failure"; message: string };

/** Resolves a host name (never an IP literal: those are judged as written). */
export type Resolver = (host: string, signal: AbortSignal) => Promise<Resolved>;

/** One request to one checked address; the URL keeps the host name for Host, SNI and the certificate. */
export type PinnedRequest = {
  url: URL;
  /** The address that was checked, as addressText writes it; the connection goes there and nowhere else. */
  address: string;
  headers: Readonly<Record<string, string>>;
  signal: AbortSignal;
};

/** The answer's head and its body, decoded from transfer and content encodings, still unread. */
export type Connected =
  | { ok: true; status: number; headers: Headers; body: ReadableStream<Uint8Array> | null }
  | {
    ok: false;
    reason: "unreachable" | "tls_failure" | "timeout" | "cancelled" | "failed";
    message: string;
  };

/**
 * Sends one request and never follows a redirect (a 3xx comes back as it is). Built by the runtime
 * root (src/runtime): on Node and Deno it connects to `address` alone.
 */
export type Connector = {
  /**
   * Whether the connection goes to the checked address. A connector that cannot pin (Workers'
   * fetch resolves again) is only handed hosts whose every answer the gateway checked, and
   * docs/security.md says what the runtime itself enforces there.
   */
  pinsAddress: boolean;
  send: (request: PinnedRequest) => Promise<Connected>;
};

/** What a fetch needs from the runtime and the gateway instance. */
export type FetchDeps = {
  resolve: Resolver;
  connector: Connector;
  /** Milliseconds since the epoch: `fetched_at`, and the robots cache's age. */
  now: () => number;
  /** The caller's cancellation; the fetch's own timeout is added to it. */
  signal: AbortSignal;
  /** The instance's robots.txt answers, one per origin (createRobotsCache). */
  robots: RobotsCache;
  /** Names the gateway, for robots.txt groups and the sites' logs (fetchUserAgent). */
  userAgent: string;
};

/** One heading of the returned text, with the 1-based lines its section spans. */
export type Anchor = {
  id: string;
  heading: string;
  level: number;
  line_start: number;
  line_end: number;
  /** Hex SHA-256 of the UTF-8 of those lines, joined by "\n". */
  sha256: string;
};

export type EvidenceLink = { url: string; text: string };

/** `result.evidence` (docs/envelope.md, "Fetching a page"). */
export type Evidence =
  & {
    requested_url: string;
    final_url: string;
    status_code: number;
    /** ISO 8601, UTC. */
    fetched_at: string;
    content_type: string;
    /** Decoded body bytes read (at most MAX_FETCH_BODY_BYTES). */
    bytes: number;
    /** Hex SHA-256 of the decoded body as read. */
    source_sha256: string;
    title: string | null;
    /** The body was cut at MAX_FETCH_BODY_BYTES, or the text at `max_chars`. */
    truncated: boolean;
    /** Hex SHA-256 of the UTF-8 of the returned `markdown` or `text`. */
    markdown_sha256: string;
    anchors: Anchor[];
    /** At most MAX_EVIDENCE_LINKS, absolute. */
    links: EvidenceLink[];
    robots: { allowed: boolean; unavailable: boolean };
    route: EvidenceRoute;
  }
  & ({ markdown: string } | { text: string });

/** A fetch refused before or while reaching the page; the envelope code says which rule. */
export type FetchRefusal = {
  outcome: "refused";
  code:
    | "fetch_disabled"
    | "url_forbidden"
    | "robots_disallowed"
    | "too_many_redirects"
    | "unsupported_content_type";
  message: string;
};

/** The page's server failed or could not be reached (`fetch_failed`). */
export type FetchFailure = {
  outcome: "failed";
  code: "fetch_failed";
  reason:
    | "dns_failure"
    | "unreachable"
    | "tls_failure"
    | "timeout"
    | "cancelled"
    | "http_status"
    | "failed";
  /** The page's status when it answered one (4xx, 5xx), else null. */
  status_code: number | null;
  /** Whether the same fetch may succeed later (5xx, 429, timeouts, unreachable). */
  retryable: boolean;
  message: string;
};

export type FetchOutcome =
  | {
    outcome: "fetched";
    evidence: Evidence;
    /** The body as read (decoded, at most MAX_FETCH_BODY_BYTES): what `source_sha256` covers. */
    body: Uint8Array;
  }
  | FetchRefusal
  | FetchFailure;
