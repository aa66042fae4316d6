/**
 * The fixed split of the extraction benchmark's pages: sorted by id (the SHA-256 of each page's
 * URL, so the order owes nothing to site or topic), even positions tune the extractor's thresholds
 * and odd positions are held out of any tuning, reported beside them.
 */

export const HALVES = ["tuning", "held-out"] as const;
export type Half = (typeof HALVES)[number];

/** The half of the page at `index` in the sorted ids. */
export function halfOf(index: number): Half {
  return index % 2 === 0 ? "tuning" : "held-out";
}
