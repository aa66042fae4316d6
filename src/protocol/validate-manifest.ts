/**
 * The manifest rules that span fields (docs/protocol.md). Each error names the provider and the field,
 * so an operator can fix a manifest from the message alone.
 */
import * as v from "valibot";
import { BUILTIN_NAMES, RESERVED_SCOPES } from "./codes.ts";
import { MAX_ECHOED_SETTING_CHARS, MAX_MANIFEST_BYTES } from "./limits.ts";
import { didYouMean } from "./did-you-mean.ts";
import {
  BINDING_PATTERN,
  CallerLimitsSchema,
  DOMAIN_PATTERN,
  FetchBlockSchema,
  type Manifest,
  ManifestSchema,
  NAME_PATTERN,
  ProviderEntrySchema,
  type ProviderSpec,
  TierSchema,
} from "./manifest-schema.ts";
import { isRecord } from "./json-value.ts";
import { endpointProblem } from "./url-policy.ts";
import { mappingProblems, MCP_FIELD_NAMES, McpMappingSchema } from "./mcp-mapping.ts";

export type ManifestIssue = {
  /** The provider's name, when the problem belongs to one. */
  provider?: string;
  /** A dotted path into the manifest, e.g. `providers.2.endpoint`. */
  field: string;
  message: string;
};

export type ManifestResult =
  | { ok: true; manifest: Manifest }
  | { ok: false; issues: ManifestIssue[] };

export type ManifestOptions = {
  /** Permit `http:` endpoints on loopback hosts (the embedded default, or TRACEFETCH_ALLOW_LOOPBACK=1). */
  allowLoopback: boolean;
  /**
   * Reads one entry of `fetch.allow_private_cidrs`, null when it is not a range: src/io/ip-rules.ts's
   * parseCidr, handed down by the caller since this layer sits below src/io. Without it, a fetch
   * block that lists ranges is refused rather than taken unchecked.
   */
  parseCidr?: (text: string) => unknown;
};

/** One issue as a line: the provider, the field, and what is wrong with it. */
export function manifestIssueLine(issue: ManifestIssue): string {
  return `${
    issue.provider ? `provider "${issue.provider}": ` : ""
  }${issue.field}: ${issue.message}`;
}

/** Every issue on one line, separated by "; ", for an error envelope's message. */
export function formatManifestIssues(issues: readonly ManifestIssue[]): string {
  return issues.map(manifestIssueLine).join("; ");
}

/**
 * Why a gateway refuses to start with a manifest: one line per problem under a heading, or a single
 * line when there is one problem.
 */
export function manifestRefusal(issues: readonly ManifestIssue[]): string {
  const lines = issues.map(manifestIssueLine);
  return lines.length === 1
    ? `invalid manifest: ${lines[0]}`
    : `invalid manifest, ${lines.length} problems:\n${lines.map((l) => `  ${l}`).join("\n")}`;
}

/** Parses manifest text (a file or a binding) under the size cap. */
export function parseManifestText(text: string, options: ManifestOptions): ManifestResult {
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_MANIFEST_BYTES) {
    return fail("manifest", `is ${bytes} bytes; at most ${MAX_MANIFEST_BYTES} are accepted`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return fail("manifest", `is not valid JSON (${(error as Error).message})`);
  }
  return validateManifest(json, options);
}

export function validateManifest(input: unknown, options: ManifestOptions): ManifestResult {
  const parsed = v.safeParse(ManifestSchema, input);
  if (!parsed.success) {
    return { ok: false, issues: parsed.issues.map((issue) => shapeIssue(issue, input)) };
  }
  const issues: ManifestIssue[] = [];
  const seen = new Set<string>();
  const providers: ProviderSpec[] = [];
  parsed.output.providers.forEach((entry, index) => {
    const at = (field: string, message: string) =>
      issues.push({ provider: entry.name, field: `providers.${index}.${field}`, message });
    if (seen.has(entry.name)) at("name", "is declared twice; names must be unique");
    seen.add(entry.name);
    const builtin = (BUILTIN_NAMES as readonly string[]).includes(entry.name);
    if (builtin && entry.endpoint !== undefined) {
      at("endpoint", `"${entry.name}" is reserved for the built-in; remove the endpoint or rename`);
    }
    if (!builtin && entry.endpoint === undefined) {
      at("endpoint", "is required (only the built-ins workspace, exa and github run without one)");
    }
    if (entry.name === "workspace" && entry.scope !== "local") {
      at("scope", 'must be "local" for the workspace built-in');
    }
    if (
      entry.name !== "workspace" && (RESERVED_SCOPES as readonly string[]).includes(entry.scope)
    ) {
      at("scope", `"${entry.scope}" is reserved (auto, local and public are request scopes)`);
    }
    if (entry.endpoint !== undefined) {
      const problem = endpointProblem(entry.endpoint, options.allowLoopback);
      if (problem) at("endpoint", problem);
    }
    if (entry.sensitivity === "internal" && !entry.isolated) {
      at("isolated", "must be true for an internal provider");
    }
    const auth = entry.auth ?? { type: entry.sensitivity === "public" ? "none" : "gateway-token" };
    if (entry.sensitivity !== "public" && auth.type !== "gateway-token") {
      at(
        "auth",
        `must be {"type":"gateway-token"} for a sensitive (${entry.sensitivity}) provider`,
      );
    }
    const mcp = entry.transport === "mcp";
    if (mcp && entry.mcp === undefined) at("mcp", 'is required for transport "mcp"');
    if (!mcp && entry.mcp !== undefined) {
      at("mcp", 'is only read with "transport": "mcp"; add that, or remove the block');
    }
    if (builtin && entry.transport !== undefined) at("transport", "is not set for a built-in");
    for (const problem of mcp && entry.mcp ? mappingProblems(entry.mcp) : []) {
      at(`mcp.${problem.field}`, problem.message);
    }
    const { endpoint, auth: _auth, transport: _transport, mcp: mapping, ...rest } = entry;
    providers.push({
      ...rest,
      auth,
      ...(endpoint === undefined ? {} : { endpoint }),
      transport: endpoint === undefined ? "builtin" : mcp ? "mcp" : "http",
      ...(mcp && mapping ? { mcp: mapping } : {}),
    } as ProviderSpec);
  });
  const tiers = parsed.output.tiers ?? {};
  const defaultTier = parsed.output.default_tier ?? null;
  if (defaultTier !== null && !Object.hasOwn(tiers, defaultTier)) {
    issues.push({
      field: "default_tier",
      message: `names "${defaultTier}", which is not in tiers`,
    });
  }
  const fetch = parsed.output.fetch;
  fetch?.allow_private_cidrs.forEach((text, index) => {
    const field = `fetch.allow_private_cidrs.${index}`;
    if (options.parseCidr === undefined) {
      issues.push({ field, message: "cannot be checked by this reader of the manifest" });
    } else if (options.parseCidr(text) === null) {
      issues.push({ field, message: `${cidrMessage} got ${JSON.stringify(echoed(text))}` });
    }
  });
  if (issues.length > 0) return { ok: false, issues };
  const limits = parsed.output.caller_limits;
  const manifest: Manifest = { providers, tiers, default_tier: defaultTier };
  if (limits !== undefined) manifest.caller_limits = limits;
  if (fetch !== undefined) manifest.fetch = fetch;
  return { ok: true, manifest };
}

const cidrMessage =
  "must be a CIDR range (10.1.0.0/16, fd00::/8) or one address, IPv4 as four decimal numbers with no leading zero;";

/** A value as an error may repeat it: cut to a bound, so a pasted blob stays off the log line. */
function echoed(text: string): string {
  return text.length > MAX_ECHOED_SETTING_CHARS
    ? `${text.slice(0, MAX_ECHOED_SETTING_CHARS)}...`
    : text;
}

function fail(field: string, message: string): ManifestResult {
  return { ok: false, issues: [{ field, message }] };
}

function shapeIssue(issue: v.BaseIssue<unknown>, input: unknown): ManifestIssue {
  const [first, second] = issue.path ?? [];
  let provider: string | undefined;
  if (first?.key === "providers" && second !== undefined && isRecord(input)) {
    const entry = Array.isArray(input.providers) ? input.providers[Number(second.key)] : undefined;
    if (isRecord(entry) && typeof entry.name === "string") provider = entry.name;
  }
  const field = v.getDotPath(issue) || "manifest";
  // A missing required key is a strict_object issue too (with nothing received), so test it first.
  const message = issue.received === "undefined"
    ? "is required"
    : issue.type === "strict_object"
    ? unknownField(issue.path ?? [])
    : patternMessage(issue) ?? `${issue.message.replace(/^Invalid [a-z]+: /i, "")}`;
  return provider === undefined ? { field, message } : { provider, field, message };
}

type PathItem = NonNullable<v.BaseIssue<unknown>["path"]>[number];

/** An unknown key, with the known key of that object it is most likely a slip for. */
function unknownField(path: readonly PathItem[]): string {
  const key = path[path.length - 1]?.key;
  const hint = typeof key === "string" ? didYouMean(key, knownFields(path)) : null;
  return hint === null ? "is not a known field" : `is not a known field; ${hint}`;
}

/** The keys of the object an unknown key was found in, from where it sits in the manifest. */
function knownFields(path: readonly PathItem[]): readonly string[] {
  const parents = path.slice(0, -1).map((item) => item.key);
  if (parents.length === 0) return Object.keys(ManifestSchema.entries);
  if (parents[0] === "providers" && parents.length === 2) {
    return Object.keys(ProviderEntrySchema.entries);
  }
  if (parents[0] === "providers" && parents[2] === "auth") return ["type", "secret"];
  if (parents[0] === "providers" && parents[2] === "mcp") {
    return parents.length === 3 ? Object.keys(McpMappingSchema.entries) : MCP_FIELD_NAMES;
  }
  if (parents[0] === "tiers" && parents.length === 2) return Object.keys(TierSchema.entries);
  if (parents[0] === "caller_limits") return Object.keys(CallerLimitsSchema.entries);
  if (parents[0] === "fetch") return Object.keys(FetchBlockSchema.entries);
  return [];
}

/** The manifest's two patterns in words: a regular expression is no help to most readers. */
function patternMessage(issue: v.BaseIssue<unknown>): string | null {
  if (issue.type !== "regex") return null;
  const requirement = (issue as v.RegexIssue<string>).requirement;
  if (requirement === NAME_PATTERN) {
    return `must be lowercase letters, digits, _ or -, starting with a letter, at most 64 characters; got ${
      JSON.stringify(echoed(String(issue.input)))
    }`;
  }
  if (requirement === DOMAIN_PATTERN) {
    return `must be a lowercase domain name (letters, digits, - and dots; an internationalised name in its xn-- form), with no scheme, port or path; got ${
      JSON.stringify(echoed(String(issue.input)))
    }`;
  }
  // The value is not repeated: a secret written where its variable's name belongs must not be.
  if (requirement === BINDING_PATTERN) {
    return "must be the name of an environment variable (uppercase letters, digits or _, not starting with a digit, at most 128 characters), never the secret itself";
  }
  return null;
}
