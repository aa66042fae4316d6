/** Modules the worker build generates (scripts/build-worker.ts); they exist only inside the bundle. */
declare module "tracefetch:workspace" {
  import type { SearchAdapter } from "../protocol/provider-contract.ts";
  /**
   * The workspace built-in over the docs corpus, search engine included; null in the code-only
   * build, which carries neither the corpus nor the engine that indexes it.
   */
  const workspace: SearchAdapter | null;
  export default workspace;
}
declare module "tracefetch:bundled-manifest" {
  /** The manifest file named by TRACEFETCH_MANIFEST_FILE at build time, or null. */
  const manifest: string | null;
  export default manifest;
}
declare module "tracefetch:api-docs-viewer" {
  /**
   * Loads the API reference viewer's script (Scalar's standalone bundle, a module of its own); null
   * when the worker was built without it (TRACEFETCH_API_DOCS off at build time).
   */
  const load: (() => Promise<string | null>) | null;
  export default load;
}
declare module "tracefetch:api-docs-viewer-script" {
  /** The viewer's script itself, imported only by the loader above. */
  const script: string | null;
  export default script;
}
