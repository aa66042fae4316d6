/**
 * Scenario 8's page: an article of about 100 KB, built the same way by the scenario (which extracts
 * it alone) and by the child process that serves it (page-site.ts).
 */

/** The page's size: the 100 KB. */
const PAGE_BYTES = 100_000;

/** An article of about PAGE_BYTES: headings, paragraphs and links, in a page with chrome. */
export function page(): string {
  const parts: string[] = [];
  let section = 0;
  while (parts.join("").length < PAGE_BYTES - 1_000) {
    section++;
    parts.push(`<h2>Section ${section}</h2>`);
    for (let p = 0; p < 6; p++) {
      parts.push(
        `<p>Paragraph ${p} of section ${section}: the harbour master records the tide at each ` +
          `bell, and the <a href="/s${section}/p${p}">log entry</a> says how high the water ` +
          `rose over the wall, how long it stayed, and which boats waited for it to fall.</p>`,
      );
    }
  }
  return `<!doctype html><html><head><title>Harbour log</title></head><body><nav><a href="/">` +
    `Home</a> <a href="/about">About</a></nav><main><article><h1>Harbour log</h1>${
      parts.join("\n")
    }</article></main><footer>Footer</footer></body></html>`;
}
