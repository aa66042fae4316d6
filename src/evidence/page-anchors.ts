/**
 * The anchors of a returned text: one per markdown heading (ATX `#` lines outside code fences),
 * each spanning its heading's line to the line before the next heading of the same or a higher
 * level (or the text's last line), 1-based, with the SHA-256 of those lines joined by "\n".
 */
import type { Anchor } from "./fetch-types.ts";
import { sha256OfText } from "./digest.ts";

/** A heading found in the markdown's lines: its 0-based line, level and text. */
export type Heading = { index: number; level: number; heading: string };

const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The ATX headings of markdown lines, code fences skipped. */
export function headingsOf(lines: readonly string[]): Heading[] {
  const headings: Heading[] = [];
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const opened = FENCE.exec(line);
    if (opened !== null) {
      const mark = opened[1] as string;
      if (fence === null) fence = mark;
      else if (mark[0] === fence[0] && mark.length >= fence.length) fence = null;
      return;
    }
    if (fence !== null) return;
    const match = ATX.exec(line);
    if (match === null) return;
    const heading = plainHeading(match[2] as string);
    if (heading !== "") headings.push({ index, level: (match[1] as string).length, heading });
  });
  return headings;
}

/**
 * The anchors of `lines` (the returned text's), from headings found in the markdown the text was
 * made from, line for line; headings past the text's end (cut at max_chars) are left out.
 */
export async function anchorsOf(
  lines: readonly string[],
  headings: readonly Heading[],
): Promise<Anchor[]> {
  const seen = new Map<string, number>();
  const inside = headings.filter((h) => h.index < lines.length);
  return await Promise.all(inside.map(async (h, at) => {
    const next = inside.slice(at + 1).find((later) => later.level <= h.level);
    let end = next === undefined ? lines.length - 1 : next.index - 1;
    while (end > h.index && (lines[end] ?? "").trim() === "") end--;
    const base = slug(h.heading);
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return {
      id: count === 1 ? base : `${base}-${count}`,
      heading: h.heading,
      level: h.level,
      line_start: h.index + 1,
      line_end: end + 1,
      sha256: await sha256OfText(lines.slice(h.index, end + 1).join("\n")),
    };
  }));
}

/**
 * Markdown's inline markup taken off a line: images and links to their text, paired emphasis and
 * code marks off, backslash escapes undone. A lone `*` or an underscore inside a word (`snake_case`)
 * is text, and stays.
 */
export function plainHeading(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/(?<![\w*\\])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])/g, "$1")
    .replace(/(?<![\w\\])_(?=\S)(.+?)(?<=\S)_(?!\w)/g, "$1")
    .replace(/\\([\\`*_{}\[\]()#+\-.!>])/g, "$1")
    .trim();
}

/** `Getting Started!` becomes `getting-started`; letters of any script are kept. */
function slug(heading: string): string {
  const made = heading.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "");
  return made === "" ? "section" : made;
}
