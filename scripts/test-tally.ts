/**
 * Counts the tests of a suite from its runner's machine-readable report, each test once, as a
 * leaf (never the `describe` around it), for scripts/run-tests.ts:
 *
 * - TapTally reads node:test's `tap` reporter as it arrives: a test point is counted unless it
 *   closes a subtest that had test points of its own. A failure keeps its name path and the first
 *   lines of its YAML diagnostics (`error:`, `location:`).
 * - junitTally reads Deno's `--junit-path` report once the run ended: every test and step is a
 *   `testcase`, named by its path (`outer > inner > test`); one whose name starts another's is a
 *   group. (Deno's TAP reporter drops what tests print and flattens nested steps; its default
 *   reporter, kept for people, prints them.)
 */

export type TapFailure = { name: string; detail: string[] };

export type TapCounts = { passed: number; failed: number; skipped: number };

type Open = { indent: number; name: string; kids: number };

const POINT = /^(\s*)(not ok|ok)\b(?:\s+\d+)?(?:\s+-\s+(.*?))?(?:\s+#\s+(SKIP|TODO)\b.*)?$/i;
const SUBTEST = /^(\s*)# Subtest: (.*)$/;
/** What of a failure's YAML block is worth a line: the error and where it was thrown. */
const DETAIL = /^\s*(error|location|expected|actual|failureType):/;
const MAX_DETAIL_LINES = 6;

export class TapTally {
  readonly counts: TapCounts = { passed: 0, failed: 0, skipped: 0 };
  readonly failures: TapFailure[] = [];
  #open: Open[] = [];
  /** Set while a failed point's YAML block is read; its detail lines go to this failure. */
  #yaml:
    | { indent: number; failure: TapFailure | null; inBlock: boolean; multiline: boolean }
    | null = null;
  #onFailure: (failure: TapFailure) => void;

  constructor(onFailure: (failure: TapFailure) => void = () => {}) {
    this.#onFailure = onFailure;
  }

  /** Feeds one line (without its newline). */
  line(text: string): void {
    if (this.#yaml !== null && this.#readYaml(text)) return;
    const subtest = SUBTEST.exec(text);
    if (subtest) {
      this.#open.push({
        indent: (subtest[1] as string).length,
        name: subtest[2] as string,
        kids: 0,
      });
      return;
    }
    const point = POINT.exec(text);
    if (point) {
      this.#point(
        (point[1] as string).length,
        point[2]?.toLowerCase() === "ok",
        point[3] ?? "",
        point[4] !== undefined,
      );
    }
  }

  #point(indent: number, ok: boolean, name: string, skipped: boolean): void {
    // Subtests this point's level has left behind (a header without a point of its own) close.
    while ((this.#open.at(-1)?.indent ?? -1) > indent) this.#open.pop();
    const top = this.#open.at(-1);
    let suite = false;
    if (top !== undefined && top.indent === indent) {
      this.#open.pop();
      suite = top.kids > 0;
    }
    const parent = this.#open.at(-1);
    if (parent !== undefined && parent.indent < indent) parent.kids++;
    let failure: TapFailure | null = null;
    if (!suite) {
      if (skipped) this.counts.skipped++;
      else if (ok) this.counts.passed++;
      else {
        this.counts.failed++;
        const path = [...this.#open.map((o) => o.name), name].filter((n) => n !== "");
        failure = { name: path.join(" > "), detail: [] };
        this.failures.push(failure);
      }
    }
    this.#yaml = { indent, failure, inBlock: false, multiline: false };
  }

  /** True when the line belonged to the YAML block after a point (or its opening). */
  #readYaml(text: string): boolean {
    const yaml = this.#yaml;
    if (yaml === null) return false;
    if (!yaml.inBlock) {
      if (text.trim() === "---") {
        yaml.inBlock = true;
        return true;
      }
      this.#finishYaml();
      return false;
    }
    if (text.trim() === "...") {
      this.#finishYaml();
      return true;
    }
    const failure = yaml.failure;
    if (failure !== null && failure.detail.length < MAX_DETAIL_LINES) {
      if (DETAIL.test(text)) {
        failure.detail.push(text.trim());
        yaml.multiline = /:\s*[|>]-?\s*$/.test(text);
      } else if (/^\s*[\w-]+:/.test(text)) {
        yaml.multiline = false;
      } else if (yaml.multiline && text.trim() !== "") {
        failure.detail.push(`  ${text.trim()}`);
      }
    }
    return true;
  }

  #finishYaml(): void {
    const failure = this.#yaml?.failure ?? null;
    this.#yaml = null;
    if (failure !== null) this.#onFailure(failure);
  }

  /** Ends the stream: a failure whose YAML block never closed is reported now. */
  end(): void {
    if (this.#yaml !== null) this.#finishYaml();
  }
}

/** The leaves of a Deno JUnit report: counts, and each failure with its message's first lines. */
export function junitTally(xml: string): { counts: TapCounts; failures: TapFailure[] } {
  const cases: Array<{ name: string; body: string }> = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const name = /\bname="([^"]*)"/.exec(m[1] as string)?.[1];
    if (name !== undefined) cases.push({ name: unescapeXml(name), body: m[2] ?? "" });
  }
  const groups = new Set<string>();
  for (const { name } of cases) {
    const parts = name.split(" > ");
    for (let i = 1; i < parts.length; i++) groups.add(parts.slice(0, i).join(" > "));
  }
  const counts: TapCounts = { passed: 0, failed: 0, skipped: 0 };
  const failures: TapFailure[] = [];
  for (const { name, body } of cases) {
    if (groups.has(name)) continue;
    if (/<skipped\b/.test(body)) counts.skipped++;
    else if (/<(failure|error)\b/.test(body)) {
      counts.failed++;
      const text = unescapeXml(body.replace(/<[^>]*>/g, "")).trim();
      failures.push({
        name,
        detail: text.split("\n").filter((l) => l.trim() !== "").slice(0, MAX_DETAIL_LINES),
      });
    } else counts.passed++;
  }
  return { counts, failures };
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_whole, entity: string) => {
    const named: Record<string, string> = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" };
    if (entity in named) return named[entity] as string;
    const code = entity.startsWith("#x") || entity.startsWith("#X")
      ? parseInt(entity.slice(2), 16)
      : parseInt(entity.slice(1), 10);
    return String.fromCodePoint(code);
  });
}

/**
 * A test Deno says has run past `boundMs`: the name in its "'NAME' has been running for over
 * (2m0s)" line (printed at 1, 2, 4, 8... minutes), or null for any other line or a shorter time.
 * Deno's node:test ignores the timeout of a `describe` and of a hook, so this is the one bound it
 * keeps over every test.
 */
export function denoStuckTest(line: string, boundMs: number): string | null {
  const found = /^'(.*)' has been running for over \((?:(\d+)m)?(\d+)s\)\s*$/.exec(line.trim());
  if (found === null) return null;
  const ms = (Number(found[2] ?? 0) * 60 + Number(found[3])) * 1_000;
  return ms >= boundMs ? (found[1] as string) : null;
}
