// cbctl serve's page: polls GET /api/breakers every second and shows each
// breaker as a tile. Rates and sparklines come from the counters of
// successive polls (the last minute of them); transitions are the state
// changes between two polls. Operator actions are POSTs with the server's
// token, offered only when the server allows control.
"use strict";

const POLL_MS = 1000;
const WINDOW_MS = 60000;
const ICONS = { CLOSED: "\u2713", OPEN: "\u2715", HALF_OPEN: "\u25d0", FORCED_OPEN: "\u2297", DISABLED: "\u2298" };
const OPEN_FIRST = { OPEN: 0, FORCED_OPEN: 1, HALF_OPEN: 2, DISABLED: 3, CLOSED: 4 };
const NOT_COUNTERS = new Set(["name", "state", "config", "hosts", "anonymous", "by", "reason"]);

const seen = new Map(); // name -> {b, at, samples: [], transitions: [], tile}
let control = false;
let pageOpened = Date.now();
let lastPoll = null;
let detailName = null;

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmtDuration(ms) {
  if (ms < 0) ms = 0;
  const s = ms / 1000;
  if (s < 10) return s.toFixed(1) + "s";
  if (s < 60) return Math.floor(s) + "s";
  const pad = (n) => String(Math.floor(n)).padStart(2, "0");
  if (s < 3600) return Math.floor(s / 60) + "m" + pad(s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h" + pad((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d" + pad((s % 86400) / 3600) + "h";
}

function fmtRate(r) {
  if (r === null) return "\u2013";
  if (r === 0) return "0/s";
  return (r < 10 ? r.toFixed(2) : r.toFixed(0)) + "/s";
}

function stateWords(state) {
  return state.replace("_", " ").toLowerCase();
}

// One breaker as the file or the fleet gives it, in the page's terms.
function normalise(raw, nowMs) {
  const b = Object.assign({}, raw);
  b.state = String(raw.state || "").toUpperCase();
  if (raw.state_ns === undefined && raw.changed_ms) b.state_ns = Math.max(0, nowMs - raw.changed_ms) * 1e6;
  if (raw.retry_after_ns === undefined) {
    b.retry_after_ns = b.state === "FORCED_OPEN" ? null : (raw.remaining_ms || 0) * 1e6;
  }
  return b;
}

function rates(samples) {
  const out = { admitted: null, rejected: null, failures: null };
  if (samples.length < 2) return out;
  const a = samples[0], z = samples[samples.length - 1];
  const dt = (z.t - a.t) / 1000;
  if (dt <= 0) return out;
  for (const k of Object.keys(out)) out[k] = Math.max(0, z[k] - a[k]) / dt;
  return out;
}

function record(entry, b, at) {
  const old = entry.b;
  if (old && old.state !== b.state) {
    entry.transitions.push({ at, from: old.state, to: b.state });
  }
  if (old && b.trips > old.trips) {
    const shown = old.state !== b.state && b.state === "OPEN" ? 1 : 0;
    const unseen = b.trips - old.trips - shown;
    if (unseen > 0) entry.transitions.push({ at, note: unseen + " trip(s) between two polls, not seen as transitions" });
  }
  entry.b = b;
  entry.at = at;
  entry.samples.push({ t: at, admitted: b.admitted || 0, rejected: b.rejected || 0, failures: b.failures || 0 });
  while (entry.samples.length > 2 && entry.samples[1].t <= at - WINDOW_MS) entry.samples.shift();
}

function sparkline(samples) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("viewBox", "0 0 120 34");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  const series = { admitted: [], rejected: [], failures: [] };
  for (let i = 1; i < samples.length; i++) {
    const dt = Math.max(0.001, (samples[i].t - samples[i - 1].t) / 1000);
    for (const k of Object.keys(series)) series[k].push(Math.max(0, samples[i][k] - samples[i - 1][k]) / dt);
  }
  let max = 0;
  for (const k of Object.keys(series)) for (const v of series[k]) max = Math.max(max, v);
  const n = series.admitted.length;
  svg.setAttribute("aria-label", n < 1 ? "no rates yet" :
    "rates over the last " + fmtDuration(samples[samples.length - 1].t - samples[0].t) + ", peak " + fmtRate(max));
  for (const k of Object.keys(series)) {
    if (n < 1) break;
    const pts = series[k].map((v, i) => {
      const x = n === 1 ? 120 : (i * 120) / (n - 1);
      const y = 32 - (max > 0 ? (v / max) * 30 : 0);
      return x.toFixed(1) + "," + y.toFixed(1);
    });
    if (n === 1) pts.unshift("0," + pts[0].split(",")[1]);
    const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    line.setAttribute("class", k);
    line.setAttribute("points", pts.join(" "));
    svg.appendChild(line);
  }
  return svg;
}

function timesText(entry, now) {
  const b = entry.b;
  const since = b.state_ns / 1e6 + (now - entry.at);
  const parts = { since: "in " + stateWords(b.state) + " for " + fmtDuration(since), remaining: "" };
  if (b.state === "OPEN") {
    const left = (b.retry_after_ns || 0) / 1e6 - (now - entry.at);
    parts.remaining = left > 0 ? "probe in " + fmtDuration(left) : "next call probes";
  } else if (b.state === "FORCED_OPEN") {
    parts.remaining = "until a reset";
  }
  return parts;
}

function makeTile(name) {
  const li = el("li", "tile");
  li.dataset.name = name;
  const head = el("div", "tile-head");
  const button = el("button", "name", name);
  button.type = "button";
  button.addEventListener("click", () => openDetail(name));
  const state = el("span", "state");
  head.append(button, state);
  const times = el("p", "times");
  times.append(el("span", "since"), el("span", "remaining"));
  li.append(head, times, el("dl", "rates"), el("div", "spark-slot"), el("p", "legend",
    "blue: admitted, red dashes: failures, brown dots: rejected (per second)"));
  return li;
}

function fillTile(entry, now) {
  const b = entry.b, li = entry.tile;
  li.dataset.state = b.state;
  const state = li.querySelector(".state");
  state.dataset.state = b.state;
  state.textContent = "";
  const icon = el("span", "icon", ICONS[b.state] || "?");
  icon.setAttribute("aria-hidden", "true");
  state.append(icon, " " + b.state);
  const t = timesText(entry, now);
  li.querySelector(".since").textContent = t.since;
  li.querySelector(".remaining").textContent = t.remaining ? " \u00b7 " + t.remaining : "";
  li.querySelector(".remaining").className = "remaining" + (t.remaining ? "" : " none");
  const r = rates(entry.samples);
  const dl = li.querySelector(".rates");
  dl.textContent = "";
  for (const [k, v] of [["admitted", fmtRate(r.admitted)], ["rejected", fmtRate(r.rejected)],
    ["failures", fmtRate(r.failures)], ["trips", String(b.trips || 0)]]) dl.append(el("dt", "", k), el("dd", "", v));
  li.querySelector(".spark-slot").replaceChildren(sparkline(entry.samples));
  let hosts = li.querySelector(".hosts-line");
  if (Array.isArray(b.hosts)) {
    if (!hosts) li.append(hosts = el("p", "hosts-line"));
    hosts.textContent = "hosts: " + (b.hosts.length ? b.hosts.join(", ") : "none reporting");
  }
}

function order(a, b) {
  const how = $("sort").value;
  if (how === "open") {
    const d = (OPEN_FIRST[a.b.state] ?? 5) - (OPEN_FIRST[b.b.state] ?? 5);
    if (d) return d;
  } else if (how === "failures") {
    const d = (rates(b.samples).failures || 0) - (rates(a.samples).failures || 0);
    if (d) return d;
  }
  return a.b.name < b.b.name ? -1 : a.b.name > b.b.name ? 1 : 0;
}

function render() {
  const now = Date.now();
  const filter = $("filter").value.trim().toLowerCase();
  const list = $("tiles");
  const entries = [...seen.values()].filter((e) => !e.gone).sort(order);
  let shown = 0;
  const counts = {};
  entries.forEach((e, i) => {
    counts[e.b.state] = (counts[e.b.state] || 0) + 1;
    if (!e.tile) e.tile = makeTile(e.b.name);
    fillTile(e, now);
    e.tile.hidden = filter !== "" && !e.b.name.toLowerCase().includes(filter);
    if (!e.tile.hidden) shown++;
    if (list.children[i] !== e.tile) list.insertBefore(e.tile, list.children[i] || null);
  });
  while (list.children.length > entries.length) list.lastChild.remove();
  $("empty").hidden = shown > 0 || entries.length === 0;
  const words = Object.keys(OPEN_FIRST).filter((s) => counts[s]).map((s) => counts[s] + " " + stateWords(s));
  $("summary").textContent = entries.length + " breakers: " + (words.join(", ") || "none") +
    (lastPoll ? " \u00b7 updated " + new Date(lastPoll).toLocaleTimeString() : "");
  if (detailName !== null) fillDetail();
}

// Between polls: only the clocks move (time in state, the countdown).
function tick() {
  const now = Date.now();
  for (const e of seen.values()) {
    if (!e.tile || e.gone || e.tile.hidden) continue;
    const t = timesText(e, now);
    e.tile.querySelector(".since").textContent = t.since;
    e.tile.querySelector(".remaining").textContent = t.remaining ? " \u00b7 " + t.remaining : "";
  }
  if (detailName !== null) fillDetail();
}

function accept(data) {
  const at = Date.now();
  lastPoll = at;
  control = !!data.control;
  $("source").textContent = data.title || "";
  $("control-state").textContent = control ? "control allowed (with the token)" : "read-only";
  const nowMs = data.now_ms || at;
  const names = new Set();
  for (const raw of data.breakers || []) {
    const b = normalise(raw, nowMs);
    names.add(b.name);
    let entry = seen.get(b.name);
    if (!entry || entry.gone) {
      const transitions = entry ? entry.transitions : [];
      if (entry || at - pageOpened > 3 * POLL_MS) transitions.push({ at, note: "appeared" });
      entry = { b: null, at, samples: [], transitions, tile: entry && entry.tile };
      seen.set(b.name, entry);
    }
    record(entry, b, at);
  }
  for (const [name, entry] of seen) {
    if (!names.has(name) && !entry.gone) {
      entry.gone = true;
      entry.transitions.push({ at, note: "gone (destroyed)" });
    }
  }
}

async function poll() {
  try {
    const res = await fetch("/api/breakers", { cache: "no-store" });
    if (!res.ok) throw new Error("HTTP " + res.status + ": " + (await res.text()));
    accept(await res.json());
    $("connection").hidden = true;
  } catch (e) {
    $("connection").hidden = false;
    $("connection").textContent = "The server does not answer (" + e.message + "); the figures shown are from " +
      (lastPoll ? new Date(lastPoll).toLocaleTimeString() : "no poll yet") + ".";
  }
  render();
}

function kvRows(table, pairs) {
  const body = table.tBodies[0];
  body.textContent = "";
  for (const [k, v] of pairs) {
    const tr = el("tr");
    const th = el("th", "", k);
    th.scope = "row";
    tr.append(th, el("td", "", v));
    body.append(tr);
  }
}

function fillDetail() {
  const entry = seen.get(detailName);
  if (!entry) return;
  const b = entry.b;
  const t = timesText(entry, Date.now());
  $("detail-title").textContent = b.name;
  $("detail-state").textContent = (ICONS[b.state] || "") + " " + b.state + ": " + t.since +
    (t.remaining ? ", " + t.remaining : "") + (entry.gone ? " (no longer in the file)" : "");
  const counters = Object.keys(b).filter((k) => !NOT_COUNTERS.has(k) && typeof b[k] !== "object")
    .map((k) => [k, String(b[k])]);
  if (b.by) counters.push(["changed by", b.by + (b.reason ? " (" + b.reason + ")" : "")]);
  kvRows($("detail-counters"), counters);
  const config = b.config && typeof b.config === "object" ? Object.entries(b.config) : [];
  kvRows($("detail-config"), config.length ? config.map(([k, v]) => [k, String(v)]) :
    [["(none)", "the fleet holds no configuration: each host's breaker has its own"]]);
  const ol = $("detail-transitions");
  ol.textContent = "";
  for (const tr of entry.transitions) {
    const when = new Date(tr.at).toLocaleTimeString();
    ol.append(el("li", "", when + ": " + (tr.note || tr.from + " \u2192 " + tr.to)));
  }
  if (!entry.transitions.length) ol.append(el("li", "", "none yet"));
  const hasHosts = Array.isArray(b.hosts);
  $("hosts-title").hidden = $("detail-hosts").hidden = !hasHosts;
  if (hasHosts) $("detail-hosts").replaceChildren(...(b.hosts.length ? b.hosts : ["none reporting"]).map((h) => el("li", "", h)));
  $("actions").hidden = !control || b.anonymous === true;
  $("token-row").hidden = !!sessionStorage.getItem("lazybreaker-token");
}

function openDetail(name) {
  detailName = name;
  $("action-result").textContent = "";
  fillDetail();
  if (!$("detail").open) $("detail").showModal();
}

async function act(action) {
  const typed = $("token").value.trim();
  if (typed) sessionStorage.setItem("lazybreaker-token", typed);
  const token = sessionStorage.getItem("lazybreaker-token") || "";
  let url = "/api/breakers/" + encodeURIComponent(detailName) + "/" + action;
  if (action === "trip") url += "?for=" + encodeURIComponent($("trip-for").value.trim() || "30s");
  const result = $("action-result");
  result.textContent = action + ": sending\u2026";
  try {
    const res = await fetch(url, { method: "POST", headers: { Authorization: "Bearer " + token } });
    const body = await res.json().catch(() => ({}));
    result.textContent = res.ok ? action + ": done" : action + " refused (" + res.status + "): " + (body.error || "");
    if (res.status === 403) sessionStorage.removeItem("lazybreaker-token");
  } catch (e) {
    result.textContent = action + " failed: " + e.message;
  }
  await poll();
}

function start() {
  const m = /^#token=([0-9a-f]+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem("lazybreaker-token", m[1]);
    history.replaceState(null, "", location.pathname);
  }
  $("filter").addEventListener("input", render);
  $("sort").addEventListener("change", render);
  $("detail-close").addEventListener("click", () => $("detail").close());
  $("detail").addEventListener("close", () => { detailName = null; });
  for (const b of document.querySelectorAll("[data-action]")) b.addEventListener("click", () => act(b.dataset.action));
  poll();
  setInterval(poll, POLL_MS);
  setInterval(tick, 250);
}

document.addEventListener("DOMContentLoaded", start);
