/**
 * `tracefetch conformance --manifest FILE --provider NAME`: one entry of a manifest checked as the
 * gateway would call it, with the name, scope and endpoint the entry declares: the provider
 * protocol's cases for an HTTP entry, the MCP cases (src/kit/conformance-mcp.ts) for a
 * `transport: "mcp"` entry. A bearer entry's secret is read from the variable it names.
 */
import { type ConformanceReport, runConformance } from "../kit/conformance.ts";
import { runMcpConformance } from "../kit/conformance-mcp.ts";
import { formatManifestIssues } from "../protocol/validate-manifest.ts";
import { didYouMean } from "../protocol/did-you-mean.ts";
import { checkManifestFile } from "./read-manifest-file.ts";

export type EntryCheck = {
  manifest: string;
  provider: string;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** Set by --token-env; else the entry's own bearer secret, if any. */
  headers: Record<string, string>;
  timeoutMs?: number;
  query?: string;
};

/** The report, or why the entry cannot be checked (a field and a message). */
export async function checkManifestEntry(
  o: EntryCheck,
): Promise<
  { ok: true; report: ConformanceReport } | { ok: false; field: string; message: string }
> {
  // Loopback endpoints are allowed, as for a provider under development.
  const checked = await checkManifestFile(o.manifest, true);
  if (!checked.ok) {
    return { ok: false, field: "manifest", message: formatManifestIssues(checked.issues) };
  }
  const names = checked.manifest.providers.map((p) => p.name);
  const spec = checked.manifest.providers.find((p) => p.name === o.provider);
  if (spec === undefined) {
    const hint = didYouMean(o.provider, names);
    return {
      ok: false,
      field: "provider",
      message: `the manifest has no provider "${o.provider}"${
        hint === null ? `; it has ${names.join(", ")}` : `; ${hint}`
      }`,
    };
  }
  if (spec.transport === "builtin" || spec.endpoint === undefined) {
    return {
      ok: false,
      field: "provider",
      message: `"${spec.name}" is a built-in: it has no endpoint to check`,
    };
  }
  const headers = { ...o.headers };
  if (headers.authorization === undefined && spec.auth.type === "bearer") {
    const secret = o.env[spec.auth.secret]?.trim();
    if (!secret) {
      return {
        ok: false,
        field: "provider",
        message: `$${spec.auth.secret}, which the entry's auth names, is not set`,
      };
    }
    headers.authorization = `Bearer ${secret}`;
  }
  const common = {
    name: spec.name,
    scope: spec.scope,
    fetch: o.fetch,
    headers,
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    ...(o.query === undefined ? {} : { query: o.query }),
  };
  const report = spec.transport === "mcp" && spec.mcp !== undefined
    ? await runMcpConformance(spec.endpoint, { ...common, mapping: spec.mcp })
    : await runConformance(spec.endpoint, common);
  return { ok: true, report };
}
