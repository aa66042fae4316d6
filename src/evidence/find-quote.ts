/**
 * Finds a quote in a fetched page's markdown (docs/envelope.md, "Fetching a page"), after folding
 * white space (any run is one space, the ends trimmed) and case (`toLowerCase`, per code point),
 * so that a quote copied across a line break or from a rendered page still matches. Answers the
 * 1-based lines it spans and the heading it sits under.
 */
import type { Anchor, QuoteFound } from "../protocol/evidence-schema.ts";

/** Folded text, and for each of its UTF-16 units the index in the original it came from. */
type Folded = { text: string; from: number[] };

function fold(text: string): Folded {
  let out = "";
  const from: number[] = [];
  let space = false;
  let i = 0;
  for (const char of text) {
    if (/\s/u.test(char)) {
      if (!space && out !== "") {
        out += " ";
        from.push(i);
      }
      space = true;
    } else {
      space = false;
      for (const unit of char.toLowerCase()) {
        out += unit;
        for (let k = 0; k < unit.length; k++) from.push(i);
      }
    }
    i += char.length;
  }
  if (out.endsWith(" ")) {
    out = out.slice(0, -1);
    from.pop();
  }
  return { text: out, from };
}

/** The 1-based line of a UTF-16 index of `text`. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) {
    line++;
  }
  return line;
}

/** Where `quote` first occurs in `markdown`, folded, with its enclosing anchor; null if nowhere. */
export function findQuote(
  markdown: string,
  quote: string,
  anchors: readonly Anchor[],
): QuoteFound | null {
  const needle = fold(quote).text;
  if (needle === "") return null;
  const hay = fold(markdown);
  const at = hay.text.indexOf(needle);
  if (at === -1) return null;
  const start = hay.from[at] as number;
  const end = hay.from[at + needle.length - 1] as number;
  const line_start = lineAt(markdown, start);
  const line_end = lineAt(markdown, end);
  let under: Anchor | null = null;
  for (const anchor of anchors) {
    if (
      anchor.line_start <= line_start && (under === null || anchor.line_start > under.line_start)
    ) {
      under = anchor;
    }
  }
  return {
    line_start,
    line_end,
    anchor: under === null ? null : { id: under.id, heading: under.heading, level: under.level },
  };
}
