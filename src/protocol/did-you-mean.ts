/**
 * "Did you mean ...?" for a field or name nobody declares: the known name closest to it, offered
 * only when it is close enough to be a slip (another case or separator, a typo, a plural, a
 * shortening). A hint, never an alias: the name it is about stays refused.
 */

/** The known name that `name` is most likely a slip for, or null when none is close. */
export function nearestName(name: string, known: readonly string[]): string | null {
  const wanted = folded(name);
  const longest = Math.max(0, ...known.map((k) => folded(k).length));
  // Past this length no known name is within reach; the bound also keeps a huge name cheap.
  if (wanted === "" || wanted.length > longest + MOST_EDITS) return null;
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(wanted, folded(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== null && bestDistance <= allowedEdits(wanted.length)) return best;
  // A shortening (`timeout` for `timeout_seconds`) is far by edits but plainly meant; a very short
  // name is part of too many words to tell.
  if (wanted.length < 4) return null;
  return known.find((candidate) => folded(candidate).includes(wanted)) ?? null;
}

/** `did you mean "x"?` for messages, or null when no known name is close. */
export function didYouMean(name: string, known: readonly string[]): string | null {
  const near = nearestName(name, known);
  return near === null || near === name ? null : `did you mean "${near}"?`;
}

/** Case and separators do not tell names apart in a person's memory: `timeoutSeconds`, `--provider`. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** A slip changes few characters; the shorter the name, the fewer edits still point at one word. */
function allowedEdits(length: number): number {
  return length < 3 ? 0 : length <= 4 ? 1 : length <= 8 ? 2 : MOST_EDITS;
}

const MOST_EDITS = 3;

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
