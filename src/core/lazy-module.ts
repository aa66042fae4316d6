/**
 * A module loaded with its first use: on Workers a module of its own beside the main one (the
 * bundler splits at each literal `import()`), on Node and Deno a file read then. Every lazy module
 * of the tree goes through `lazy`, so each is loaded once however many callers ask at once. It is
 * core's, Web APIs only, as the lowest layer every user of it (core, auth, the gateway, http)
 * reaches.
 */

/**
 * `load` (an arrow that returns a dynamic import of a literal path, so the bundler still sees the
 * module) called once: every call answers the same promise. A load that failed is tried again by
 * the next call.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    if (loading === null) {
      const started = load();
      started.catch(() => {
        if (loading === started) loading = null;
      });
      loading = started;
    }
    return loading;
  };
}
