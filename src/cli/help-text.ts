/** What `--help` prints for each command; docs/cli.md says the same at length. */
import { REPLAY_REGRESSION_THRESHOLD } from "../protocol/trace-limits.ts";

export const OVERVIEW = `tracefetch: search many providers through one TraceFetch Edge gateway

usage: tracefetch <command> [options]

commands:
  search QUERY | -     search (a gateway, or in process with --manifest); - reads a request on stdin
  status               the gateway's status
  doctor               check the configuration and the gateway, listing every problem
  expand               the evidence behind a search result's locator
  fetch URL            a page as evidence (markdown, hashes, a signed receipt); --out DIR a bundle
  crawl URL            a bounded crawl of one site: a line per page fetched
  verify DIR           check a bundle offline: receipt, text, raw body and --quote TEXT
  connect URL          save the gateway URL and which variable holds its token
  schema NAME          print a JSON Schema (envelope, search-request, provider-manifest, ...)
  validate MANIFEST    check a provider manifest offline
  conformance URL      check a provider endpoint against the provider protocol
  replay TRACES        run recorded search traces again (a manifest, or the default) and compare
  serve                run the gateway here, as npm start does
  mcp                  the gateway's MCP tools over stdio, for desktop clients

every command but schema, serve and mcp takes --json: print exactly one envelope on stdout and exit
with its exit_code (0 ok, 1 transport, 2 usage, 3 client, 4 server). Decide from ok and action.
--json and --gateway URL may also come before the command: tracefetch --json status.

the gateway: --gateway URL, else the one saved by connect, else http://127.0.0.1:8787.
the token: from TRACEFETCH_TOKEN (or the variable connect saved); never sent over plain http
to a host that is not loopback.

tracefetch <command> --help for a command's options.
`;

export const HELP: Record<string, string> = {
  search: `usage: tracefetch search QUERY [options]
       tracefetch search - [options]      (a POST /v1/search body on stdin, at most 1 MiB)

  --scope S            auto (default), public, local or a manifest scope
  --provider NAME      run this provider (repeat, or comma-separate, for more)
  --limit N            results per provider and in the merged list, 1..100 (default 8)
  --tier T             a tier from the manifest (its cost ceiling trims the plan)
  --view merged        leave the per-provider attempts out of the envelope
  --timeout-ms N       the search's deadline, 1..300000 (default 10000); the CLI waits 5 s more
  --max-age-seconds N  the oldest cached provider answer to accept, 0..86400; 0 asks every provider
  --gateway URL        the gateway to ask (else the saved connection, else http://127.0.0.1:8787)
  --manifest FILE      search in process with this manifest; no gateway needed
  --allow-sensitive    with --manifest: run account-visible and internal providers too
  --json               print the envelope (one JSON object) and exit with its exit_code
`,
  status: `usage: tracefetch status [--gateway URL] [--json]

  the gateway's status envelope (GET /v1/status): each provider's state, searches in flight.
`,
  doctor: `usage: tracefetch doctor [--gateway URL] [--json]

  checks the saved connection, the token variable, TRACEFETCH_MANIFEST (if set) and the gateway
  (GET /v1/doctor: each provider's health; GET /v1/status from a gateway without it), and lists
  every problem with its action.
`,
  expand: `usage: tracefetch expand PROVIDER LOCATOR [--gateway URL] [--json]

  the evidence behind a locator (POST /v1/expand), from the provider that found it: take PROVIDER
  from a search result's found_by and LOCATOR from its locator. Shows the title and the start of
  the text; --json prints the envelope with the whole text.
`,
  fetch: `usage: tracefetch fetch URL [options]

  a page as evidence (POST /v1/fetch): its main content as markdown, anchors, links, the SHA-256
  of the body and of the text, and a receipt the gateway signs. Shows the title and the start of
  the text; --json prints the envelope.
  --format text        the same content with no markup (default markdown)
  --max-chars N        the most characters of text answered, 1..200000 (default 20000)
  --max-age-seconds N  the oldest cached page to accept, 0..86400; 0 fetches it now
  --timeout-ms N       the fetch's timeout, 1..60000 (default 10000)
  --out DIR            write a bundle: raw.<ext> (the body as received), normalized.md,
                       anchors.jsonl, links.json, receipt.json and the gateway's jwks.json
  --gateway URL        the gateway to ask (else the saved connection, else http://127.0.0.1:8787)
  --json               print the envelope (one JSON object) and exit with its exit_code
`,
  crawl: `usage: tracefetch crawl URL [options]

  a bounded crawl of URL's site (POST /v1/crawl): the page and the pages of its origin it links
  to, breadth first, every page fetched as tracefetch fetch would, robots.txt honoured. Prints a
  line per page as it arrives (depth, URL, title), then the counts; --json prints one envelope
  with the counts (the pages' evidence is in the route's events).
  --max-pages N        pages fetched at most, 1..50 (default 10)
  --max-depth N        links followed from URL at most, 0..3 (default 1)
  --query TEXT         rank each page's passages against TEXT; the best one is shown
  --gateway URL        the gateway to ask (else the saved connection, else http://127.0.0.1:8787)
  --json               print the envelope (one JSON object) and exit with its exit_code
`,
  verify: `usage: tracefetch verify DIR [--quote TEXT] [--jwks FILE] [--json]

  checks a bundle tracefetch fetch --out wrote, with no network: the receipt's signature against
  DIR/jwks.json (the gateway's keys, saved when the bundle was written) or the JWK Set in FILE,
  normalized.md against markdown_sha256, raw.<ext> against source_sha256, and TEXT in the text
  (white space and case folded). The verdict: verified, quote_not_found, content_mismatch,
  signature_invalid or unsigned; the envelope is ok whatever it says: read result.verdict.
  --jwks FILE          a JWK Set you fetched yourself from a gateway you trust
`,
  connect: `usage: tracefetch connect URL [--token-env VAR] [--yes] [--json]

  checks that URL answers GET /v1/status, then saves the URL and the name of the variable that
  holds the token (default TRACEFETCH_TOKEN; never the token itself) in
  $XDG_CONFIG_HOME/tracefetch/connection.json (mode 0600).
  also shows what the gateway records of searches (its mining state).
  --yes                replace a saved connection to another gateway, or connect to a gateway
                       whose mining is undecided (a trace sink not yet confirmed), without asking
`,
  schema: `usage: tracefetch schema NAME

  prints the raw JSON Schema (draft 2020-12): envelope, search-request, provider-manifest,
  provider-request, provider-response.
`,
  validate: `usage: tracefetch validate MANIFEST [--json]

  checks a manifest file offline with the gateway's manifest rules; exit 2 when it is invalid.
  http: loopback endpoints pass only with TRACEFETCH_ALLOW_LOOPBACK=1, as in the gateway.
`,
  conformance: `usage: tracefetch conformance URL [--name N --scope S] [options]
       tracefetch conformance --manifest FILE --provider NAME [options]
       npm run conformance -- URL [--name N --scope S] [options]   (the same command)

  calls a provider endpoint as the gateway would and prints every exchange with its verdict;
  exit 0 when no case fails, 2 (fix_input) when any fails.
  --name N, --scope S  the name and scope the manifest declares for this endpoint, together;
                       without them the identity case is not checked, and the report says
                       which provider and scope the endpoint names itself
  --query Q            a query that finds something, for the limit cases (default "search")
  --timeout-ms N       per request (default 10000)
  --token-env VAR      send "authorization: Bearer $VAR" with every request
  --manifest FILE, --provider NAME
                       check that manifest entry as the gateway calls it: its endpoint, name
                       and scope, its bearer secret's variable, and for transport "mcp" the MCP
                       cases (initialize, the tool listed, searches mapped as the entry says)
  --json               print an envelope (command conformance) listing each case
`,
  replay: `usage: tracefetch replay TRACES.jsonl (--manifest FILE | --default) [options]

  runs the recorded searches of a trace file (the gateway's TRACEFETCH_TRACE_FILE) again, in
  process against the manifest, and reports per search and overall how the merged list changed:
  overlap@10, rank-biased overlap (p = 0.9), and the providers that succeeded then and fail now.
  Only traces that kept their query's text (TRACEFETCH_TRACE_RAW_QUERIES=1) can run again; the
  others are counted as skipped. With TRACEFETCH_TRACE_SECRET set, hashed locators are matched.
  Exit 2 (invalid_field) when a provider that succeeded when recorded fails in more than half of
  the replayed searches.
  --manifest FILE      the manifest to run the searches against
  --default            the embedded default npm start runs, its example providers started here
                       (give --manifest or --default)
  --qrels FILE         judgments (query-id<TAB>doc-id<TAB>relevance; the query id is the trace's
                       request id): adds npm run eval's nDCG@10, MAP@100, Recall@100, MRR, P@10
  --baseline FILE      an earlier replay --json: exit 2 when a figure fell by more than
                       ${REPLAY_REGRESSION_THRESHOLD}
  --allow-sensitive    run account-visible and internal providers too (you are the operator)
  --allow-failing      compare even when a provider now fails in most searches (exit 0)
  --json               print the envelope (command replay) and exit with its exit_code
`,
  serve: `usage: tracefetch serve [--host H] [--port N] [--manifest FILE]

  runs the gateway as npm start does (HOST, PORT, TRACEFETCH_MANIFEST and the other variables
  apply; the options override them). Stops on Ctrl-C.
`,
  mcp: `usage: tracefetch mcp [--gateway URL | --manifest FILE | --default]

  the gateway's MCP tools (search, expand, providers, status) over stdio, for a desktop client
  that runs a command (docs/mcp.md). Relays to the gateway's /mcp: --gateway URL, else the one
  saved by connect, else http://127.0.0.1:8787, with the token as search sends it. Or runs the
  gateway in this process: --manifest FILE, or the embedded default with --default.
  stdout carries JSON-RPC only; diagnostics go to stderr. Stops when stdin ends.
`,
};
