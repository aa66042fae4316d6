/**
 * A page's bytes as text, in the encoding the HTML standard's sniffing would pick (WHATWG HTML,
 * "Determining the character encoding"): a byte order mark first (it cannot be wrong about
 * itself, and the standard lets it override the header), then the charset the Content-Type
 * names, then for HTML a `<meta charset>` or `<meta http-equiv>` in the first bytes, then UTF-8
 * when the bytes are valid UTF-8, else windows-1252, the web's legacy default. Labels are the
 * Encoding Standard's, read by `TextDecoder` (`latin1` and `iso-8859-1` are windows-1252,
 * `gb2312` is GBK), so every legacy encoding a runtime's TextDecoder knows is read.
 */

/** How far into an HTML page a `<meta>` charset is looked for: the HTML standard's prescan reads 1,024 bytes; pages past it put the tag later, so a few KiB more. */
export const META_PRESCAN_BYTES = 4_096;

/** How the encoding was decided, for tests and traces. */
export type EncodingSource = "bom" | "header" | "meta" | "utf-8" | "fallback";

export type Decoded = { text: string; encoding: string; source: EncodingSource };

const BOMS: ReadonlyArray<[string, number[]]> = [
  ["utf-8", [0xef, 0xbb, 0xbf]],
  ["utf-16be", [0xfe, 0xff]],
  ["utf-16le", [0xff, 0xfe]],
];

function bomOf(bytes: Uint8Array): string | null {
  for (const [encoding, mark] of BOMS) {
    if (mark.every((b, i) => bytes[i] === b)) return encoding;
  }
  return null;
}

/** A decoder for a label, or null when the runtime does not know it. */
function decoderFor(label: string, fatal = false): TextDecoder | null {
  try {
    return new TextDecoder(label.trim(), { fatal });
  } catch {
    return null;
  }
}

/** The charset parameter of a Content-Type, or null. */
export function headerCharset(contentType: string): string | null {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1] ?? null;
}

/** The value of an attribute in a tag's markup, or null. */
function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
  return match === null ? null : (match[1] ?? match[2] ?? match[3] ?? "");
}

/** The charset a `<meta>` tag near the start of an HTML page declares, or null. */
export function metaCharset(bytes: Uint8Array): string | null {
  // The bytes read as windows-1252: every ASCII-compatible encoding spells the tag in ASCII.
  const head = new TextDecoder("windows-1252").decode(bytes.subarray(0, META_PRESCAN_BYTES));
  for (const [tag] of head.matchAll(/<meta\s[^>]*>/gi)) {
    const content = attribute(tag, "content");
    const charset = attribute(
      content === null ? tag : tag.replace(/\scontent\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/i, ""),
      "charset",
    );
    if (charset !== null && charset.trim() !== "") return charset.trim();
    if (content !== null && /^content-type$/i.test(attribute(tag, "http-equiv") ?? "")) {
      const declared = headerCharset(`;${content.replace(/^[^;]*/, "")}`);
      if (declared !== null) return declared;
    }
  }
  return null;
}

/**
 * The text of a body. `html` turns on the `<meta>` prescan. A declared UTF-16 in a `<meta>` is read
 * as UTF-8, as the standard says: a page that could declare it in ASCII is not UTF-16.
 */
export function decodeBody(bytes: Uint8Array, contentType: string, html: boolean): Decoded {
  const bom = bomOf(bytes);
  if (bom !== null) return decodeAs(bytes, bom, "bom");
  const declared = headerCharset(contentType);
  if (declared !== null && decoderFor(declared) !== null) {
    return decodeAs(bytes, declared, "header");
  }
  const meta = html ? metaCharset(bytes) : null;
  if (meta !== null && decoderFor(meta) !== null) {
    return decodeAs(bytes, /^utf-?16/i.test(meta) ? "utf-8" : meta, "meta");
  }
  const strict = decoderFor("utf-8", true) as TextDecoder;
  try {
    return { text: strict.decode(bytes), encoding: "utf-8", source: "utf-8" };
  } catch {
    return decodeAs(bytes, "windows-1252", "fallback");
  }
}

function decodeAs(bytes: Uint8Array, label: string, source: EncodingSource): Decoded {
  const decoder = decoderFor(label) ?? (decoderFor("utf-8") as TextDecoder);
  // A BOM is consumed by the decoder of its own encoding (TextDecoder's default), never shown.
  const text = decoder.decode(bytes);
  return {
    text: decoder.encoding === "windows-1252" ? windows1252(text) : text,
    encoding: decoder.encoding,
    source,
  };
}

/**
 * windows-1252's characters at bytes 0x80 to 0x9F (the Encoding Standard's index), for runtimes
 * whose TextDecoder reads that label as ISO-8859-1 (Node 20 does: curly quotes came back as C1
 * controls). A correct decoder leaves no such control to map, so this changes nothing there.
 */
const CP1252_HIGH =
  "\u20ac\x81\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\x8d\u017d\x8f" +
  "\x90\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\x9d\u017e\u0178";

function windows1252(text: string): string {
  return text.replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] as string);
}
