/** A page's link made absolute against the page's final URL; null unless it is http or https. */
export function absoluteLink(href: string, base: URL): string | null {
  try {
    const url = new URL(href, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}
