/** Modules the worker build generates (scripts/build-worker.ts); they exist only inside the bundle. */
declare module "tracefetch:workspace-corpus" {
  import type { CorpusDocument } from "../transport/corpus-adapter.ts";
  const documents: CorpusDocument[];
  export default documents;
}
declare module "tracefetch:bundled-manifest" {
  /** The manifest file named by TRACEFETCH_MANIFEST_FILE at build time, or null. */
  const manifest: string | null;
  export default manifest;
}
