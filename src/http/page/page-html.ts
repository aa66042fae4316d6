/**
 * The page's HTML: a search form, the token field (outside the form, so no submission can carry
 * it) and the form's Search button after it, a row per provider and the merged list. No control has a `name`: were the script not to
 * run, submitting the form would send nothing. Every control has a label; the live regions say
 * when a search starts, ends, or fails.
 */
import {
  DEFAULT_TIMEOUT_MS,
  MAX_QUERY_CHARS,
  MAX_TIMEOUT_MS,
  MIN_TIMEOUT_MS,
} from "../../protocol/limits.ts";

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TraceFetch Edge</title>
<link rel="icon" href="/page/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/page/app.css">
<script type="module" src="/page/app.js"></script>
</head>
<body>
<main>
<h1>TraceFetch Edge</h1>
<p>One query to every provider of this gateway: watch each one answer, then read the fused list.
Results come from the providers and are untrusted: verify a page before you cite it.</p>
<form id="search-form" role="search">
<div class="field">
<label for="query">Query</label>
<input id="query" type="search" required maxlength="${MAX_QUERY_CHARS}" autocomplete="off">
</div>
<div class="field">
<label for="scope">Scope</label>
<select id="scope"><option value="">auto (every scope)</option></select>
</div>
<fieldset id="providers">
<legend>Providers (none ticked: those the scope selects)</legend>
<p id="providers-note" class="note">Loading the providers…</p>
</fieldset>
<div class="field">
<label for="deadline">Deadline in milliseconds</label>
<input id="deadline" type="number" min="${MIN_TIMEOUT_MS}" max="${MAX_TIMEOUT_MS}" step="1"
  value="${DEFAULT_TIMEOUT_MS}" inputmode="numeric">
</div>
</form>
<div class="field token">
<label for="token">Bearer token (optional; kept in this page's memory only, sent as
Authorization)</label>
<input id="token" type="password" autocomplete="off" spellcheck="false">
</div>
<button id="search" type="submit" form="search-form">Search</button>
<p id="status" role="status" aria-live="polite"></p>
<section aria-labelledby="rows-heading">
<h2 id="rows-heading">Providers as they answer</h2>
<p class="note">Each bar is a provider's latency on a logarithmic scale up to the search's
deadline, drawn as a line, so a fast answer shows beside a slow one.
<span id="deadline-note"></span>
<span class="key outcome-success">success</span> <span class="key outcome-timeout">timeout</span>
<span class="key outcome-failure">failure</span> <span class="key outcome-skipped">skipped</span>
<span class="key outcome-waiting">waiting</span></p>
<ul id="rows" class="rows"></ul>
</section>
<section aria-labelledby="merged-heading" aria-live="polite">
<h2 id="merged-heading">Results</h2>
<ol id="merged" class="merged"></ol>
</section>
</main>
</body>
</html>
`;
