/**
 * The passages of a page's returned text that answer a query: its paragraphs (runs of lines with no
 * blank line between them) ranked as the corpus engine ranks documents (src/core/terms), the
 * paragraphs themselves being the collection, so a word on every paragraph of the page counts for
 * little and a rare one for much.
 */
import { rankTexts } from "../core/terms/rank-texts.ts";
import type { Passage } from "../protocol/evidence-schema.ts";

/** A paragraph's lines, 1-based and inclusive, as anchors count them. */
type Block = { start: number; end: number; text: string };

/** A line that is only a heading: a heading on its own is a title, not a passage to read. */
const HEADING_LINE = /^#{1,6}\s/;

/** Decimal places a score keeps: enough to order passages, short on the wire. */
const SCORE_DECIMALS = 4;

/** The best `max` passages of `text` for `query`, best first; none when no paragraph holds a term. */
export function passagesOf(text: string, query: string, max: number): Passage[] {
  const blocks = blocksOf(text.split("\n"));
  const ranked = rankTexts(blocks.map((b) => b.text), query);
  const scale = 10 ** SCORE_DECIMALS;
  return ranked.slice(0, max).map(({ index, score }) => {
    const block = blocks[index] as Block;
    return {
      text: block.text,
      line_start: block.start,
      line_end: block.end,
      score: Math.round(score * scale) / scale,
    };
  });
}

/** The paragraphs of `lines`, a lone heading line left out. */
function blocksOf(lines: readonly string[]): Block[] {
  const blocks: Block[] = [];
  let start = -1;
  const close = (end: number) => {
    if (start === -1) return;
    const kept = lines.slice(start, end);
    if (!(kept.length === 1 && HEADING_LINE.test(kept[0] as string))) {
      blocks.push({ start: start + 1, end, text: kept.join("\n") });
    }
    start = -1;
  };
  lines.forEach((line, i) => {
    if (line.trim() === "") close(i);
    else if (start === -1) start = i;
  });
  close(lines.length);
  return blocks;
}
