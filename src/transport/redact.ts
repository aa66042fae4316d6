/**
 * Provider text shown to a caller: secrets removed, whitespace collapsed, length bounded.
 */
import { MAX_DIAGNOSTIC_CHARS } from "../protocol/limits.ts";

const REDACTED = "[redacted]";

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // RFC 6750 bearer values and other auth schemes in echoed headers.
  [/\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // key=value or key: value pairs whose key names a secret.
  [
    /\b([A-Za-z0-9_-]*(?:token|secret|passw(?:or)?d|api[_-]?key|apikey|credential|session|authorization|cookie|private[_-]?key)[A-Za-z0-9_-]*)(["']?\s*[:=]\s*["']?)[^\s"'&,;]+/gi,
    `$1$2${REDACTED}`,
  ],
  // Compact JWS/JWT: three base64url parts.
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // Common vendor key prefixes (GitHub, OpenAI-style, AWS access keys).
  [
    /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16})\b/g,
    REDACTED,
  ],
];

/** Redacts secrets, collapses whitespace and cuts to `max` code points. */
export function redact(text: string, max: number = MAX_DIAGNOSTIC_CHARS): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  out = out.replace(/\s+/g, " ").trim();
  const points = Array.from(out);
  return points.length <= max ? out : `${points.slice(0, max - 1).join("")}…`;
}
