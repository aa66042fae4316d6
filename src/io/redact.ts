/**
 * Provider text shown to a caller: secrets removed, invisible characters dropped, whitespace
 * collapsed, length bounded. One pattern list serves every diagnostic (provider error messages,
 * warnings, quoted content types, field names and identities) and every metadata string value.
 *
 * Invisible characters (zero-width spaces and joiners, word joiners, byte order marks, bidi
 * controls, variation selectors and the like) are tolerated between the letters of each keyword,
 * between a keyword and its value and inside a value, so they can neither hide a keyword nor split a
 * secret from it. Matching runs on the text as given, so text without a secret comes back unchanged.
 *
 * `redact` runs on every warning and on text a provider sized, so each pattern must take time
 * linear in the text: where a pattern could start again inside a run it has already scanned and
 * rescan the rest of the run, either the start is refused (a lookbehind) or the scan is bounded.
 * tests/redaction.test.ts times 100 KB hostile inputs.
 */
import { MAX_DIAGNOSTIC_CHARS } from "../protocol/limits.ts";
import { wellFormed } from "./well-formed.ts";

const REDACTED = "[redacted]";

/**
 * Characters that render as nothing: format characters (Unicode category Cf: zero-width space and
 * joiners, word joiner, byte order mark, bidi controls, soft hyphen, tags), the combining grapheme
 * joiner, Hangul and Khmer fillers, and variation selectors. Written for a character class.
 */
const INV =
  "\\p{Cf}\\u034F\\u115F\\u1160\\u17B4\\u17B5\\u3164\\uFFA0\\uFE00-\\uFE0F\\u{E0100}-\\u{E01EF}";
/** JavaScript's `\s` without U+FEFF, which is invisible (Cf) and so belongs to `INV` here. */
const WS = "\\t\\n\\v\\f\\r \\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

const INVISIBLE = new RegExp(`[${INV}]`, "gu");
/** Whitespace other than a single space; a single space is left alone, sparing most replacements. */
const WHITESPACE = /\s{2,}|[^\S ]/g;

/**
 * A literal whose characters may be separated by invisible characters; a space is any whitespace.
 * Letters match either case unless `exact`: no pattern needs the `i` flag, which would also make
 * `[a-z]` match upper case letters where case matters.
 */
function lit(word: string, exact = false): string {
  const char = (c: string) =>
    c === " "
      ? `[${WS}]+`
      : !exact && c.toLowerCase() !== c.toUpperCase()
      ? `[${c.toLowerCase()}${c.toUpperCase()}]`
      : c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return Array.from(word, char).join(`[${INV}]*`);
}

/** Percent-encoded whitespace, once or twice encoded: `%20`, `%2520`, `%09`. */
const PCT_SPACE = "%(?:25)?(?:20|09|0[AaDd])";
/** Percent-encoded `:` or `=`. */
const PCT_ASSIGN = "%(?:25)?3[AaDd]";
/** An opening quote, possibly escaped as inside a JSON string, or percent-encoded. */
const QUOTE = `(?:\\\\?["'\`]|%(?:25)?(?:22|27))`;
/**
 * What may stand between an auth scheme and its credential: whitespace, invisible characters, a
 * colon or equals sign, `+` (form-encoded space), their percent-encodings, then an opening quote.
 */
const SCHEME_SEP = `(?:[${WS}${INV}:=+]|${PCT_SPACE}|${PCT_ASSIGN}|%(?:25)?2[Bb])+${QUOTE}?`;
/** What may stand between a secret-named key and its value: `key=`, `key: `, `"key": "`. */
const KEY_SEP =
  `${QUOTE}?(?:[${WS}${INV}]|${PCT_SPACE})*(?:[:=]|${PCT_ASSIGN})(?:[${WS}${INV}]|${PCT_SPACE})*${QUOTE}?`;
/** A credential: everything up to whitespace, a quote or a list or parameter separator. */
const VALUE = `[^${WS}"'\`,;&\\\\]+`;
/** Characters of a token68 / base64 / base64url / percent-encoded credential. */
const B64 = `A-Za-z0-9._~+/=%\\-${INV}`;

/** Auth schemes seen in `Authorization` values. */
const SCHEMES = ["bearer", "basic", "digest", "negotiate", "ntlm", "dpop", "token"];
/** Key names that name a secret; a key containing one (`access_token`, `X-Api-Key`) counts. */
const SECRET_KEYS = [
  "token",
  "secret",
  "password",
  "passwd",
  "api_key",
  "api-key",
  "apikey",
  "credential",
  "session",
  "authorization",
  "cookie",
  "private_key",
  "private-key",
  "privatekey",
];
/**
 * A metadata key that names a secret, in any case: the words above, so the sanitiser removes
 * exactly the keys whose values `redact` hides after `key=`.
 */
export const SECRET_KEY = new RegExp(SECRET_KEYS.join("|"), "i");
/**
 * The rest of a key name after the secret word (`_id` in `token_id`). Bounded, so a long word costs a
 * fixed amount; each step ends on a visible character, so it never competes with `KEY_SEP` for an
 * invisible run.
 */
const KEY_AFFIX = `(?:[${INV}]*[A-Za-z0-9_\\-]){0,40}`;

const either = (words: string[]) => `(?:${words.map((w) => lit(w)).join("|")})`;
const PEM_LABEL = `(?:-[${INV}]*){0,5}`;
const PEM_KIND = `[ A-Za-z0-9${INV}]{0,40}?${lit("PRIVATE KEY")}(?:${lit(" BLOCK")})?`;

/** The first segment of a compact JWS/JWT encodes a JSON object, so it holds `eyJ` (`{"`). */
const JWT_HEADER = new RegExp(`e[${INV}]*y[${INV}]*J`, "u");

/**
 * What every rule below needs somewhere in the text: an invisible character (which may split any
 * keyword), a keyword, a `:` or `=` (or its percent-encoding) after a secret-named key, `eyJ` of a
 * token, or a vendor prefix. Text with none of them (most metadata values, most titles of warnings)
 * cannot match a rule and skips the list; a test checks every redacted form against it.
 */
export const MAY_HOLD_SECRET = new RegExp(
  `[${INV}]|begin|bearer|basic|token|[:=]|%(?:25)?3[ad]|eyj|gh|github|sk-|akia`,
  "iu",
);

const RULES: ReadonlyArray<readonly [RegExp, string | ((match: string) => string)]> = [
  // A PEM private key block (PKCS#1 RSA, SEC1 EC, PKCS#8 plain or ENCRYPTED, OpenSSH, PGP), up to
  // its END line, or to the end of the text when the END line is missing or was cut off.
  [
    new RegExp(
      `${PEM_LABEL}${lit("BEGIN")}${PEM_KIND}[${INV}]*-[\\s\\S]*?(?:${
        lit("END")
      }${PEM_KIND}(?:[${INV}]*-)+|$)`,
      "gu",
    ),
    REDACTED,
  ],
  // `Bearer` then whatever single value follows it, whatever its length, after any separator:
  // `Bearer x`, `Bearer: x`, `Bearer\u200Bx`, `bearer%20x`, `Bearer+x`. An ordinary word after it
  // is redacted too (`bearer [redacted] expired`): the word after `Bearer` is too often the
  // credential to guess which it is.
  [new RegExp(`(${lit("bearer")}${SCHEME_SEP})${VALUE}`, "gu"), `$1${REDACTED}`],
  // `Basic` and `token` are also ordinary English words ("basic auth failed", "token expired",
  // "Token limit reached"), so the value after them is redacted only when it looks like a
  // credential: 8 or more token characters with a digit, base64 punctuation (`+/=_%`) or a lower
  // case letter followed by an upper case one, or 24 or more token characters, longer than words.
  [
    new RegExp(
      `(${
        either(["basic", "token"])
      }${SCHEME_SEP})(?=[${B64}]{8})(?=[A-Za-z.~\\-${INV}]*(?:[0-9+/=_%]|[a-z][${INV}]*[A-Z])|[${B64}]{24})[${B64}]+`,
      "gu",
    ),
    `$1${REDACTED}`,
  ],
  // A key naming a secret, then its value: `token=x`, `client_secret: x`, `"api_key": "x"`,
  // `access_token%3Dx`. An auth scheme after the key is kept and its credential redacted:
  // `Authorization: Bearer: x` becomes `Authorization: Bearer: [redacted]`.
  [
    new RegExp(
      `(${either(SECRET_KEYS)}${KEY_AFFIX}${KEY_SEP}(?:${either(SCHEMES)}${SCHEME_SEP})?)${VALUE}`,
      "gu",
    ),
    `$1${REDACTED}`,
  ],
  // Compact JWS/JWT: three runs of base64url characters joined by dots, the first holding an
  // encoded JSON object (`eyJ`) anywhere, so a token glued to a prefix (`x-eyJ...`) is caught too.
  // A match starts only where a run starts and its classes exclude the dot, so each run is scanned
  // once: linear in the text. The whole dotted run goes, prefix included.
  [
    new RegExp(
      `(?<![A-Za-z0-9_\\-${INV}])[A-Za-z0-9_\\-${INV}]{5,}\\.[A-Za-z0-9_\\-${INV}]{5,}\\.[A-Za-z0-9_\\-${INV}]*`,
      "gu",
    ),
    (match) => JWT_HEADER.test(match.slice(0, match.indexOf("."))) ? REDACTED : match,
  ],
  // Vendor key prefixes: GitHub tokens, OpenAI-style secret keys, AWS access key ids. `sk-` must
  // not follow a letter or digit, so hyphenated words such as `risk-assessment-...` stay readable.
  [
    new RegExp(
      `${lit("gh", true)}[${INV}]*[pousr][${INV}]*_[A-Za-z0-9${INV}]{20,}|${
        lit("github_pat_", true)
      }[A-Za-z0-9_${INV}]{20,}|(?<![A-Za-z0-9])${lit("sk-", true)}[A-Za-z0-9_\\-${INV}]{16,}|${
        lit("AKIA", true)
      }(?:[${INV}]*[0-9A-Z]){16}`,
      "gu",
    ),
    REDACTED,
  ],
];

/**
 * Replaces every secret the pattern list recognises with `[redacted]`, keeping the key or scheme
 * that named it. Nothing else changes, so text without a secret comes back as it was.
 */
export function redactSecrets(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of RULES) {
    out = typeof replacement === "string"
      ? out.replace(pattern, replacement)
      : out.replace(pattern, replacement);
  }
  return out;
}

/**
 * Redacts secrets, drops invisible characters, collapses whitespace, replaces lone surrogates and
 * cuts to `max` code points.
 */
export function redact(text: string, max: number = MAX_DIAGNOSTIC_CHARS): string {
  const out = wellFormed(redactSecrets(text)).replace(INVISIBLE, "").replace(WHITESPACE, " ")
    .trim();
  if (out.length <= max) return out;
  // A code point is one or two UTF-16 units: past 2 * max units the text is over `max` for certain,
  // and only its head needs splitting into code points.
  const points = Array.from(out.length <= 2 * max ? out : out.slice(0, 2 * max));
  return out.length <= 2 * max && points.length <= max
    ? out
    : `${points.slice(0, max - 1).join("")}…`;
}
