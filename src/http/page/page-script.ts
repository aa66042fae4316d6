/**
 * The page's module script, as the text the browser runs. It streams a search as NDJSON
 * (docs/envelope.md, "Streaming") with fetch and a stream reader and draws each event as it lands.
 *
 * Everything a provider sent (titles, snippets, locators, messages, evidence) is untrusted: it
 * reaches the page only through `textContent` and attributes, never as markup; only an http(s)
 * locator becomes a link to it, and a repository path (the workspace's) a link to its evidence,
 * shown in place. The token lives in its input field and in the headers of the calls made
 * with it: never in a URL, a cookie or storage.
 */
import { SCALE_PAST_DEADLINE } from "./page-style.ts";

export const PAGE_SCRIPT = String.raw`const byId = (id) => document.getElementById(id);
const form = byId("search-form");
const queryInput = byId("query");
const scopeSelect = byId("scope");
const providerBox = byId("providers");
const deadlineInput = byId("deadline");
const tokenInput = byId("token");
const statusLine = byId("status");
const rowList = byId("rows");
const mergedList = byId("merged");

/** The attempts of the running search, by their index in plan order (found_in names them so). */
let attempts = [];
let running = null;
let deadlineMs = 0;
/** A bar's full width in deadlines. */
const SCALE = ${SCALE_PAST_DEADLINE};

/** Where a latency sits on a track: logarithmic up to SCALE deadlines (page-style.ts, latencyShare). */
function share(ms) {
  return Math.min(Math.log1p(Math.max(ms, 0)) / Math.log1p(deadlineMs * SCALE), 1);
}

function percent(fraction) {
  return (fraction * 100).toFixed(2) + "%";
}
const rows = new Map();

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** A call's headers, with the token, when one was pasted, as its Authorization. */
function headers(extra) {
  const token = tokenInput.value.trim();
  const out = { accept: "application/json", ...extra };
  if (token !== "") out.authorization = "Bearer " + token;
  return out;
}

function say(text) {
  statusLine.textContent = text;
}

function problemText(body, status) {
  if (body && typeof body.code === "string") {
    const error = body.error && typeof body.error.message === "string" ? body.error.message : "";
    return body.code + " (action " + body.action + ")" + (error ? ": " + error : "");
  }
  return "the gateway answered HTTP " + status + " without an envelope";
}

async function loadProviders() {
  const note = byId("providers-note");
  let res;
  let body = null;
  try {
    res = await fetch("/v1/providers", { headers: headers({}), cache: "no-store" });
    body = await res.json();
  } catch {
    note.textContent = "The providers could not be loaded.";
    return;
  }
  if (!body || body.ok !== true) {
    note.textContent = "The providers could not be loaded: " + problemText(body, res.status);
    return;
  }
  const ticked = new Set(Array.from(providerBox.querySelectorAll("input:checked"), (i) => i.value));
  const scope = scopeSelect.value;
  for (const old of providerBox.querySelectorAll("label")) old.remove();
  while (scopeSelect.options.length > 1) scopeSelect.remove(1);
  const scopes = new Set();
  for (const p of body.result.providers) {
    const label = element("label");
    const box = element("input");
    box.type = "checkbox";
    box.value = p.name;
    box.checked = ticked.has(p.name);
    label.append(box, " " + p.name + " (" + p.scope + ")");
    providerBox.append(label);
    scopes.add(p.scope);
  }
  for (const s of scopes) scopeSelect.add(new Option(s, s));
  scopeSelect.value = scopes.has(scope) ? scope : "";
  note.textContent = body.result.providers.length === 0
    ? "This gateway lists no provider you may search."
    : "";
}

/** The group a row is drawn in: its colour and the first word of its text. */
function groupOf(outcome) {
  if (outcome === "success" || outcome === "timeout" || outcome === "skipped") return outcome;
  return "failure";
}

function row(name) {
  let entry = rows.get(name);
  if (entry) return entry;
  const item = element("li", "row outcome-waiting");
  const track = element("span", "track");
  const bar = element("span", "bar");
  const line = element("span", "deadline");
  line.style.left = percent(share(deadlineMs));
  line.style.right = "auto";
  track.append(bar, line);
  const outcome = element("span", "outcome");
  const swatch = element("span", "swatch");
  swatch.setAttribute("aria-hidden", "true");
  const text = element("span", "outcome-text", "waiting");
  outcome.append(swatch, text);
  const message = element("span", "message");
  item.append(element("span", "name", name), track, outcome, message);
  rowList.append(item);
  entry = { item, bar, text, message };
  rows.set(name, entry);
  return entry;
}

function drawRow(name, group, words, latencyMs, message) {
  const entry = row(name);
  entry.item.className = "row outcome-" + group;
  entry.text.textContent = group + ": " + words;
  entry.message.textContent = message || "";
  entry.bar.style.width = percent(latencyMs === null ? 0 : share(latencyMs));
}

function drawPlan(decision) {
  byId("deadline-note").textContent = "The line is the deadline: " + deadlineMs + " ms.";
  for (const name of decision.providers) row(name);
  for (const s of decision.skipped) {
    const why = s.message || (s.until ? "until " + s.until : "");
    drawRow(s.provider, "skipped", s.reason, null, why);
  }
  for (const t of decision.trimmed) {
    drawRow(t.provider, "skipped", t.reason, null, "costs " + t.cost_micros + " micros");
  }
}

function drawAttempt(index, attempt) {
  attempts[index] = attempt;
  const budget = attempt.budget ? " (" + attempt.budget + ")" : "";
  const count = attempt.outcome === "success" ? ", " + attempt.candidate_count + " results" : "";
  const group = groupOf(attempt.outcome);
  const outcome = attempt.outcome === group ? "" : attempt.outcome + ", ";
  const latency = ", " + attempt.latency_ms + " ms";
  // A cached answer says so, and how old it is: the provider was not asked this time.
  const cached = attempt.cached ? ", cached " + Math.round(attempt.age_ms / 1000) + " s ago" : "";
  const words = outcome + "code " + attempt.code + budget + count + latency + cached;
  const message = attempt.outcome === "success" ? "" : attempt.message;
  drawRow(attempt.provider, group, words, attempt.latency_ms, message);
}

/** Only an http(s) locator becomes a link; any other is shown as text. */
function linkTarget(locator) {
  try {
    const url = new URL(locator);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * A path in a repository (the workspace's docs/deploy.md): no URL to open, so its title links to
 * the evidence, shown in place as Expand shows it.
 */
function isRepoPath(locator) {
  return /^[\w.-]+(\/[\w.-]+)+(#[\w.-]*)?$/.test(locator) && !locator.includes("..");
}

/** The locator as the provider that found the page issued it, which is what its expand knows. */
function issuedLocator(entry) {
  const place = entry.found_in[0];
  const attempt = place ? attempts[place.candidate] : undefined;
  const candidate = attempt && attempt.candidates ? attempt.candidates[place.citation] : undefined;
  return candidate ? candidate.locator : entry.locator;
}

function drawMerged(merged) {
  mergedList.replaceChildren();
  merged.forEach((entry, i) => {
    const item = element("li", "hit");
    const titleId = "hit-" + i;
    const href = linkTarget(entry.locator);
    const inPlace = !href && isRepoPath(entry.locator);
    const title = element(href || inPlace ? "a" : "span", "title", entry.title || entry.locator);
    title.id = titleId;
    const meta = element("div", "meta");
    meta.append(element("span", "best-rank", "best rank " + entry.best_rank));
    meta.append(element("span", null, "found by"));
    for (const name of entry.found_by) meta.append(element("span", "badge", name));
    const expand = element("button", "secondary", "Expand");
    expand.type = "button";
    expand.setAttribute("aria-describedby", titleId);
    const evidence = element("div", "evidence-slot");
    evidence.id = titleId + "-evidence";
    evidence.setAttribute("aria-live", "polite");
    expand.addEventListener("click", () => showEvidence(entry, expand, evidence));
    if (href) {
      title.href = href;
      title.rel = "noopener noreferrer";
    } else if (inPlace) {
      title.href = "#" + evidence.id;
      title.addEventListener("click", (event) => {
        event.preventDefault();
        showEvidence(entry, expand, evidence);
      });
    }
    meta.append(expand);
    const locator = element("div", "locator", entry.locator);
    item.append(title, locator, element("p", "snippet", entry.snippet), meta, evidence);
    mergedList.append(item);
  });
}

async function showEvidence(entry, button, slot) {
  button.disabled = true;
  slot.replaceChildren(element("p", "note", "Expanding…"));
  let res;
  let body = null;
  try {
    res = await fetch("/v1/expand", {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({ provider: entry.found_by[0], locator: issuedLocator(entry) }),
    });
    body = await res.json();
  } catch {
    slot.replaceChildren(element("p", "note", "The gateway could not be reached."));
    button.disabled = false;
    return;
  }
  button.disabled = false;
  if (!body || body.ok !== true) {
    slot.replaceChildren(element("p", "note", "No evidence: " + problemText(body, res.status)));
    return;
  }
  const e = body.result.evidence;
  const note = "from " + body.result.provider + (e.truncated ? ", truncated" : "");
  const heading = element("p", "note", (e.title || e.locator) + " (" + note + ")");
  slot.replaceChildren(heading, element("pre", "evidence", e.text));
}

/** Draws one event; true for the last one, done. */
function handle(event) {
  if (event.event === "plan") drawPlan(event.decision);
  else if (event.event === "provider") drawAttempt(event.index, event.attempt);
  else if (event.event === "merged") drawMerged(event.merged);
  else if (event.event === "done") {
    if (!event.ok) say("Done: " + problemText(event, 200));
    else {
      const total = event.result ? ", " + event.result.latency_ms.total + " ms" : "";
      say("Done: " + event.code + ", " + mergedList.children.length + " results" + total);
    }
    return true;
  }
  return false;
}

/** Reads the NDJSON stream to its end; whether its done event came. */
async function readEvents(res, signal) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let done = false;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done || signal.aborted) break;
    const value = chunk.value;
    buffered += value;
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line !== "" && handle(JSON.parse(line))) done = true;
    }
  }
  return done;
}

async function search() {
  if (running) running.abort();
  const controller = new AbortController();
  running = controller;
  const request = { query: queryInput.value };
  if (scopeSelect.value !== "") request.scope = scopeSelect.value;
  const chosen = Array.from(providerBox.querySelectorAll("input:checked"), (i) => i.value);
  if (chosen.length > 0) request.providers = chosen;
  const deadline = Number(deadlineInput.value);
  if (Number.isInteger(deadline) && deadline > 0) request.timeout_ms = deadline;
  deadlineMs = request.timeout_ms || Number(deadlineInput.defaultValue);
  attempts = [];
  rows.clear();
  rowList.replaceChildren();
  mergedList.replaceChildren();
  mergedList.parentElement.setAttribute("aria-busy", "true");
  say("Searching…");
  try {
    const res = await fetch("/v1/search", {
      method: "POST",
      headers: headers({ "content-type": "application/json", accept: "application/x-ndjson" }),
      body: JSON.stringify(request),
      signal: controller.signal,
    });
    if (!(res.headers.get("content-type") || "").startsWith("application/x-ndjson")) {
      say("Refused: " + problemText(await res.json().catch(() => null), res.status));
      return;
    }
    const done = await readEvents(res, controller.signal);
    if (!done && !controller.signal.aborted) say("The stream ended before the search was done.");
  } catch (error) {
    if (!controller.signal.aborted) {
      say("The search broke off: " + (error && error.message ? error.message : String(error)));
    }
  } finally {
    if (running === controller) {
      mergedList.parentElement.setAttribute("aria-busy", "false");
    }
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
tokenInput.addEventListener("change", loadProviders);
loadProviders();
`;
