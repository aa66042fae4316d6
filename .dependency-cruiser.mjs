// The import check (`npm run check:imports`, and tests/import-check.test.ts): no cycle, type-only
// imports included, and every import points to its own layer or a lower one. The layer order is
// written once, in LAYERS below; every layer rule is generated from it. docs/architecture.md
// ("Layers and the import check") explains the order.

/**
 * @typedef {object} Layer
 * @property {string} name What the layer is, for the rule names and messages.
 * @property {string[]} folders Folders of the layer, relative to the repository root. A folder
 *   that does not exist yet is covered as soon as it appears.
 * @property {boolean} [siblingsImportEachOther] Whether the folders of this layer may import one
 *   another. Without it, folders that share a rank stay independent of each other.
 * @property {string[]} [onlyImports] When set, the only folders of this repository the layer may
 *   import besides its own (npm packages stay allowed).
 */

/**
 * Top to bottom: an import may point to its own layer or a lower one, never a higher one.
 * @type {Layer[]}
 */
export const LAYERS = [
  {
    name: "composition roots",
    // bench/ (the benchmarks, the soak, bench/eval) wires the gateway and the example providers
    // together as scripts/ does.
    folders: ["src/runtime", "src/cli", "scripts", "bin", "bench"],
    siblingsImportEachOther: true,
  },
  {
    name: "example providers",
    folders: ["providers"],
    // src/core/terms: the terms and scores the corpus engine ranks with, shared with the passages
    // of a fetched page so that both rank one way.
    onlyImports: ["src/kit", "src/protocol", "src/core/terms"],
  },
  { name: "http", folders: ["src/http"] },
  // Metrics and traces (prom-client, OpenTelemetry) behind src/core's telemetry ports: the roots
  // pick them from the settings, so neither the gateway nor the worker's main module loads them.
  { name: "observability", folders: ["src/observe"] },
  // The evidence fetch (src/evidence) ranks with the gateway and stays independent of it: the
  // routes call each, and neither needs the other.
  { name: "gateway and evidence", folders: ["src/gateway", "src/evidence"] },
  // The settings, read once by a root, and the configuration they resolve into.
  { name: "config", folders: ["src/config"] },
  { name: "shared state", folders: ["src/state"] },
  { name: "builtins", folders: ["src/builtins"] },
  { name: "kit", folders: ["src/kit"] },
  { name: "envelope and auth", folders: ["src/envelope", "src/auth"] },
  { name: "core", folders: ["src/core"] },
  { name: "transport", folders: ["src/transport"] },
  { name: "I/O primitives", folders: ["src/io"], onlyImports: ["src/protocol"] },
  { name: "protocol", folders: ["src/protocol"] },
];

/**
 * The only places under src/ that may import a Node-only module (`node:*`, a bare Node builtin,
 * or an npm package in NODE_ONLY_PACKAGES). Everything else under src/ runs on Workers too.
 */
export const NODE_ALLOWED = ["src/runtime", "src/cli", "src/kit/node"];

/** npm packages that only run on Node. */
export const NODE_ONLY_PACKAGES = ["undici", "@hono/node-server", "tsx"];

/**
 * npm packages that need Node's sockets (`node:net`, `node:tls`), which Node and Deno have and
 * Workers do not, and the one file each may be imported by: the worker never reaches that file.
 */
export const SOCKET_PACKAGES = {
  // The shared state's store and the answer cache's, each over a connection of its own made here.
  ioredis: ["src/state/redis-connection.ts"],
};

/**
 * Where the parts of a full-text search engine (a stemmer) may be imported: built-ins and example
 * providers rank their own documents, and src/core/terms holds the terms and scores the corpus
 * engine and a fetched page's passages share; the transport only reaches providers, and the rest
 * of the core only fuses what they return.
 */
export const ENGINE_PACKAGES = ["stemmer"];
export const ENGINE_ALLOWED = ["src/builtins", "providers", "src/core/terms"];

/** The folders the check reads; the `check:imports` script in package.json names the same. */
export const CHECKED = ["src", "providers", "scripts", "bin", "bench"];

const escape = (/** @type {string} */ text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** A rule-name fragment: "envelope and auth" becomes "envelope-and-auth", "src/kit" "kit". */
const slug = (/** @type {string} */ text) =>
  text.replace(/^src\//, "").replace(/[^a-z0-9]+/gi, "-").toLowerCase();

/** A path pattern matching any module inside one of the folders. */
const under = (/** @type {string[]} */ folders) => `^(${folders.map(escape).join("|")})(/|$)`;

/** A pattern matching an npm package's files (also when it is resolved through a nested folder). */
const packages = (/** @type {string[]} */ names) =>
  `(^|/)node_modules/(${names.map(escape).join("|")})/`;

/**
 * A path pattern matching a folder or the file of the same name, so the kit's Node part may be
 * `src/kit/node/` or `src/kit/node.ts`.
 * @param {string[]} folders
 */
const underOrFile = (folders) => `^(${folders.map(escape).join("|")})(/|\\.ts$)`;

/** @returns {import("dependency-cruiser").IForbiddenRuleType[]} */
function layerRules() {
  const rules = [];
  LAYERS.forEach((layer, rank) => {
    const higher = LAYERS.slice(0, rank).flatMap((above) => above.folders);
    if (higher.length > 0) {
      rules.push({
        name: `layer:${slug(layer.name)}-imports-no-higher-layer`,
        comment: `${layer.name} is rank ${rank + 1} of ${LAYERS.length}; ` +
          "an import points to its own layer or a lower one (LAYERS in .dependency-cruiser.mjs).",
        severity: "error",
        from: { path: under(layer.folders) },
        to: { path: under(higher) },
      });
    }
    if (!layer.siblingsImportEachOther && layer.folders.length > 1) {
      for (const folder of layer.folders) {
        rules.push({
          name: `layer:${slug(folder)}-imports-no-sibling`,
          comment: `${
            layer.folders.join(" and ")
          } share a rank and stay independent of each other.`,
          severity: "error",
          from: { path: under([folder]) },
          to: { path: under(layer.folders.filter((other) => other !== folder)) },
        });
      }
    }
    if (layer.onlyImports) {
      rules.push({
        name: `layer:${slug(layer.name)}-imports-only-${layer.onlyImports.map(slug).join("-and-")}`,
        comment: `${layer.name} import only ${layer.onlyImports.join(", ")} from this repository ` +
          "(and npm packages).",
        severity: "error",
        from: { path: under(layer.folders) },
        // Higher layers are the rule above's; this one names the lower layers left out.
        to: {
          path: under(LAYERS.slice(rank + 1).flatMap((below) => below.folders)),
          pathNot: under(layer.onlyImports),
        },
      });
    }
  });
  return rules;
}

const layered = LAYERS.flatMap((layer) => layer.folders);

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      comment: "No module reaches itself again, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...layerRules(),
    {
      name: "layer:every-src-folder-has-a-layer",
      comment: "A folder under src/ that is missing from LAYERS has no place in the order yet.",
      severity: "error",
      from: { path: "^src/", pathNot: under(layered) },
      to: {},
    },
    {
      name: "layer:imports-only-layered-src",
      comment: "A module under src/ that is missing from LAYERS has no place in the order yet.",
      severity: "error",
      from: {},
      to: { path: "^src/", pathNot: under(layered) },
    },
    {
      name: "providers:each-stays-in-its-folder",
      comment: "An example provider imports its own files (and providers/shared), not another's.",
      severity: "error",
      from: { path: "^providers/([^/]+)/" },
      to: { path: "^providers/", pathNot: "^providers/($1|shared)/" },
    },
    {
      name: "node-only:builtins",
      comment: "Node builtins only in " + NODE_ALLOWED.join(", ") +
        ": the rest of src/ also runs on Deno and Workers.",
      severity: "error",
      from: { path: "^src/", pathNot: underOrFile(NODE_ALLOWED) },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "node-only:packages",
      comment: "Node-only npm packages only in " + NODE_ALLOWED.join(", ") + ".",
      severity: "error",
      from: { path: "^src/", pathNot: underOrFile(NODE_ALLOWED) },
      to: { path: packages(NODE_ONLY_PACKAGES) },
    },
    {
      name: "node-only:kit-node-part",
      comment: "The kit's Node part is for Node callers; Worker-safe code never imports it.",
      severity: "error",
      from: { path: "^src/", pathNot: underOrFile(NODE_ALLOWED) },
      to: { path: underOrFile(["src/kit/node"]) },
    },
    ...Object.entries(SOCKET_PACKAGES).map(([name, files]) => ({
      name: `sockets:${slug(name)}-only-in-its-adapter`,
      comment: `${name} needs Node's sockets: only ${
        files.join(" and ")
      } import it, loaded on Node and Deno alone.`,
      severity: "error",
      from: { pathNot: files.map((f) => `^${f.replaceAll(".", "\\.")}$`).join("|") },
      to: { path: packages([name]) },
    })),
    {
      name: "sockets:worker-never-reaches-a-socket-adapter",
      comment: "The Workers entry must not reach a module that needs Node's sockets.",
      severity: "error",
      from: { path: "^src/runtime/worker\\.ts$" },
      to: {
        path: Object.values(SOCKET_PACKAGES).flat().map((f) => `^${f.replaceAll(".", "\\.")}$`)
          .join("|"),
        reachable: true,
      },
    },
    {
      name: "engine:only-in-builtins-and-providers",
      comment:
        "A search engine ranks documents inside a built-in or a provider, and its terms and " +
        "scores live in src/core/terms; nowhere else.",
      severity: "error",
      from: { pathNot: under(ENGINE_ALLOWED) },
      to: { path: packages(ENGINE_PACKAGES) },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import the check cannot resolve escapes every rule above.",
      severity: "error",
      from: {},
      // Virtual modules that the worker build provides (src/runtime/virtual-modules.d.ts), and the
      // Workers runtime's own modules (cloudflare:workers, src/runtime/cloudflare-workers.d.ts).
      to: { couldNotResolve: true, pathNot: "^(tracefetch|cloudflare):" },
    },
  ],
  options: {
    // Type-only imports (`import type`) are edges too, so a cycle through types is a cycle.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "(^|/)node_modules/" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
