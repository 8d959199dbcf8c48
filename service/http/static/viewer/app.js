// app.js — the Manifest viewer: a list of games, and a game page with the board picture,
// a scrubber over every event, the event log, the audit verdict and dispute files.
// Plain JavaScript modules, no build step; talks only to this server's REST API.

import { Api } from "./api.js";
import { verifyDispute } from "./verify.js";
import { firstVisit, lang, legend, markChanges, t } from "./explain.js";

document.documentElement.lang = lang;

const app = document.getElementById("app");
let stopPage = () => {};

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// "1:05", "2:03:04", "3 d 04:05:06" — a clock's time left (never negative).
function duration(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(total / 86400);
  const hms = [Math.floor((total % 86400) / 3600), Math.floor((total % 3600) / 60), total % 60];
  const pad = (n) => String(n).padStart(2, "0");
  const text = hms[0] || d ? `${hms[0]}:${pad(hms[1])}:${pad(hms[2])}` : `${hms[1]}:${pad(hms[2])}`;
  return d ? `${d} d ${text}` : text;
}

function route() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  return { parts: path.split("/").filter(Boolean), params };
}

function token() {
  return sessionStorage.getItem("manifest.token") || "";
}

function time(at) {
  if (!at) return "";
  return at.replace("T", " ").replace(/(\.\d{3})\d*/, "$1").replace(/(Z|\+00:00)$/, " UTC");
}

function badge(text, cls) {
  return h("span", { class: `badge ${cls || text}` }, text);
}

// --- the list of games ---------------------------------------------------------------------
async function listPage(params) {
  const api = new Api(token());
  document.title = "Manifest — games";
  const gameSel = h("select", { id: "filter-game" }, h("option", { value: "" }, "every game"));
  const statusSel = h(
    "select",
    { id: "filter-status" },
    ["", "open", "active", "finished"].map((s) => h("option", { value: s }, s || "any status")),
  );
  const body = h("tbody");
  const more = h("button", { id: "more", hidden: true }, "more…");
  const table = h(
    "table",
    { id: "games" },
    h("thead", {}, h("tr", {}, ["game", "kind", "status", "players", "events", "created"].map((t) => h("th", {}, t)))),
    body,
  );
  app.replaceChildren(
    h("h1", {}, "Games"),
    h("div", { class: "filters" }, h("label", {}, "game ", gameSel), h("label", {}, "status ", statusSel)),
    h("div", { class: "card" }, table),
    h("p", {}, more),
  );
  try {
    for (const r of await api.json("/v1/rules")) gameSel.append(h("option", { value: r.game }, r.title));
  } catch (error) {
    app.append(h("p", { class: "error" }, String(error.message || error)));
  }
  gameSel.value = params.get("game") || "";
  statusSel.value = params.get("status") || "";
  let next = null;
  let loads = 0;
  async function load(reset) {
    const mine = ++loads;
    const q = new URLSearchParams();
    if (gameSel.value) q.set("game", gameSel.value);
    if (statusSel.value) q.set("status", statusSel.value);
    if (!reset && next) q.set("cursor", next);
    const page = await api.json(`/v1/games?${q}`);
    if (mine !== loads) return; // a newer filter is loading
    if (reset) body.replaceChildren();
    for (const g of page.games) {
      body.append(
        h(
          "tr",
          { "data-id": g.id, "data-status": g.status, "data-game": g.game },
          h("td", {}, h("a", { href: `#/games/${g.id}` }, g.id.slice(0, 8))),
          h("td", {}, g.game),
          h("td", {}, badge(g.status)),
          h("td", {}, (g.players || []).map((p) => p ?? "—").join(", ")),
          h("td", {}, g.version),
          h("td", {}, time(g.created_at)),
        ),
      );
    }
    if (!body.children.length) {
      body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "no games")));
      // a server with no game at all: say how to start one
      if (reset && !gameSel.value && !statusSel.value && !app.querySelector("#welcome")) {
        app.insertBefore(firstVisit(h, location.origin), app.children[1]);
      }
    }
    next = page.next;
    more.hidden = !next;
    app.dataset.ready = "list";
  }
  const refilter = () => {
    const q = new URLSearchParams();
    if (gameSel.value) q.set("game", gameSel.value);
    if (statusSel.value) q.set("status", statusSel.value);
    history.replaceState(null, "", `#/${q.toString() ? "?" + q : ""}`);
    app.dataset.ready = "";
    load(true);
  };
  gameSel.addEventListener("change", refilter);
  statusSel.addEventListener("change", refilter);
  more.addEventListener("click", () => load(false));
  await load(true);
}

// --- one game --------------------------------------------------------------------------------
async function gamePage(id, at) {
  const api = new Api(token());
  let doc;
  try {
    doc = await api.json(`/v1/games/${id}`);
  } catch (error) {
    app.replaceChildren(h("p", { class: "error" }, `Game ${id}: ${error.message}`), h("a", { href: "#/" }, "← all games"));
    return;
  }
  document.title = `Manifest — ${doc.game} ${id.slice(0, 8)}`;
  const names = new Map(doc.seats.map((s) => [s.seat, s.name]));
  let events = await api.allEvents(id);
  let selected = at && at >= 1 ? Math.min(at, events.length) : events.length;
  let following = true;
  let boardRequest = 0;

  const statusBadge = h("span", { id: "status" }, badge(doc.status));
  const auditBox = h("span", { id: "audit" });
  const board = h("div", { id: "board" });
  const scrubber = h("input", { id: "scrubber", type: "range", min: 1, max: Math.max(1, events.length), value: selected });
  const position = h("span", { id: "position" });
  const first = h("button", { id: "first", title: "first event (Home)" }, "|◀");
  const prev = h("button", { id: "prev", title: "previous event (←)" }, "◀");
  const next = h("button", { id: "next", title: "next event (→)" }, "▶");
  const last = h("button", { id: "last", title: "last event (End)" }, "▶|");
  const log = h("tbody");
  const logTable = h("table", { id: "log" }, h("thead", {}, h("tr", {}, ["#", "seat", "event", "time"].map((t) => h("th", {}, t)))), log);
  const logBox = h("div", { class: "logbox" }, logTable);
  const disputeBox = h("div", { id: "dispute" });
  const disputeButton = h("button", { id: "dispute-open" }, "dispute file of this event");
  const viewerBox = h("span", { id: "viewer-seat", class: "muted" }, token() ? "" : t.asSpectator);
  const asOf = h("span", { id: "as-of", class: "muted" });
  const why = h("p", { id: "why" });
  const legendBox = h(
    "div",
    { class: "card", id: "legend" },
    h("h2", {}, t.legend),
    h("ul", { class: "legend" }, legend(doc.game).map((item) =>
      h("li", {}, item.colour ? h("span", { class: "swatch", style: `background:${item.swatch}` }) : h("span", { class: "symbol" }, item.swatch), " ", item.text))),
  );
  const players = h("div", { id: "players" });

  // Who plays, and once the game is over its scores and winners (the game's `result`).
  function showPlayers(result) {
    const winners = new Set(result ? result.winners : []);
    const head = ["seat", "player", ...(result ? ["score", ""] : [])];
    const outcome = !result
      ? null
      : winners.size
        ? `won by ${[...winners].map((w) => names.get(w) ?? `seat ${w}`).join(" and ")}`
        : "no winner";
    players.replaceChildren(
      h(
        "table",
        { class: "players" },
        h("thead", {}, h("tr", {}, head.map((t) => h("th", {}, t)))),
        h(
          "tbody",
          {},
          doc.seats.map((s) =>
            h(
              "tr",
              { "data-seat": s.seat, class: winners.has(s.seat) ? "winner" : "" },
              h("td", {}, String(s.seat)),
              h("td", { class: "name" }, s.name ?? "open"),
              ...(result
                ? [
                    h("td", { class: "score" }, String(result.scores[s.seat] ?? "")),
                    h("td", {}, winners.has(s.seat) ? badge("winner", "ok") : ""),
                  ]
                : []),
            ),
          ),
        ),
      ),
      outcome ? h("p", { id: "outcome" }, `Finished: ${outcome}.`) : "",
    );
    players.dataset.finished = String(Boolean(result));
  }
  showPlayers(doc.status === "finished" ? doc.result : null);

  // Each seat's turn clock (docs/api.md, "Clocks"): a running clock counts down to its
  // deadline, a stopped Fischer clock shows its bank, a seat the bot sits in for says so.
  let clock = doc.clock ?? null;
  const clocks = h("div", { id: "clocks" });
  function showClocks() {
    if (!clock) {
      clocks.replaceChildren();
      return;
    }
    const now = Date.now();
    const t = clock.terms;
    const terms = {
      turn: `${t.seconds} s per move`,
      fischer: `${duration((t.bank_seconds ?? 0) * 1000)} + ${t.increment_seconds ?? 0} s per move`,
      correspondence: `${t.days} day${t.days === 1 ? "" : "s"} per move`,
    }[t.kind] ?? t.kind;
    clocks.replaceChildren(
      h(
        "table",
        { class: "clocks" },
        h("thead", {}, h("tr", {}, ["seat", `clock (${terms})`, ""].map((x) => h("th", {}, x)))),
        h(
          "tbody",
          {},
          clock.seats.map((c) =>
            h(
              "tr",
              { "data-seat": c.seat, class: c.running ? "running" : "" },
              h("td", {}, `${c.seat}${names.get(c.seat) ? " " + names.get(c.seat) : ""}`),
              h(
                "td",
                { class: "time" },
                c.sitting_in
                  ? "bot sits in"
                  : c.running
                    ? duration(Date.parse(c.deadline) - now)
                    : t.kind === "fischer"
                      ? duration(c.bank_ms)
                      : "—",
              ),
              h("td", {}, c.expiries ? `${c.expiries} expired in a row` : ""),
            ),
          ),
        ),
      ),
    );
  }
  showClocks();
  const ticker = setInterval(showClocks, 250);

  app.replaceChildren(
    h(
      "div",
      { class: "game-head" },
      h("a", { href: "#/" }, "← all games"),
      h("h1", {}, doc.game),
      h("span", { class: "id" }, id),
      statusBadge,
      auditBox,
      viewerBox,
      asOf,
    ),
    players,
    why,
    clocks,
    h(
      "div",
      { class: "layout" },
      h("div", { class: "card" }, board, h("div", { class: "controls" }, first, prev, scrubber, next, last, position)),
      h(
        "div",
        { class: "side" },
        h("div", { class: "card" }, h("h2", {}, "Events"), logBox),
        legendBox,
        h("div", { class: "card" }, h("h2", {}, "Dispute file"), disputeButton, disputeBox),
      ),
    ),
  );

  function row(e) {
    const seat = e.seat === null || e.seat === undefined ? "—" : `${e.seat}${names.get(e.seat) ? " " + names.get(e.seat) : ""}`;
    return h(
      "tr",
      { "data-version": e.version, onclick: () => select(e.version) },
      h("td", { class: "v" }, e.version),
      h("td", {}, seat),
      h("td", { class: "t", "data-type": e.type, title: e.type }, e.sentence ? e.sentence.text : e.type),
      h("td", { title: time(e.at) }, time(e.at).slice(11)),
    );
  }
  log.replaceChildren(...events.map(row));

  async function select(n) {
    if (!events.length) return;
    n = Math.max(1, Math.min(events.length, n));
    selected = n;
    following = n === events.length;
    scrubber.max = events.length;
    scrubber.value = n;
    position.textContent = `event ${n} / ${events.length}`;
    first.disabled = prev.disabled = n <= 1;
    last.disabled = next.disabled = n >= events.length;
    for (const tr of log.querySelectorAll("tr.selected")) tr.classList.remove("selected");
    const tr = log.querySelector(`tr[data-version="${n}"]`);
    if (tr) {
      tr.classList.add("selected");
      const top = tr.offsetTop - logTable.tHead.offsetHeight;
      if (top < logBox.scrollTop || tr.offsetTop + tr.offsetHeight > logBox.scrollTop + logBox.clientHeight) {
        logBox.scrollTop = Math.max(0, top - logBox.clientHeight / 2);
      }
    }
    disputeBox.replaceChildren();
    // the position's own address: #/games/{id}/{n} (sharable; reloading it opens event n)
    const here = `#/games/${id}/${n}`;
    if (location.hash !== here) history.replaceState(null, "", here);
    const mine = ++boardRequest;
    try {
      const [svg, at] = await Promise.all([
        api.svg(`/v1/games/${id}/replay/${n}/board.svg`),
        api.json(`/v1/games/${id}/replay/${n}`),
      ]);
      if (mine !== boardRequest) return;
      board.innerHTML = svg;
      markChanges(board, events[n - 1]);
      showPosition(at, n);
      board.dataset.version = String(n);
    } catch (error) {
      if (mine === boardRequest) board.replaceChildren(h("p", { class: "error" }, error.message));
    }
  }

  // The header as of event n: its status, who is to act, and once over its result and why.
  function showPosition(at, n) {
    statusBadge.replaceChildren(badge(at.status));
    if (doc.status !== "finished" && n === events.length) statusBadge.append(" ", badge("live", "live"));
    const acting = (at.to_act || []).map((s) => names.get(s) ?? `seat ${s}`).join(", ");
    asOf.textContent = `${t.at(n, events.length)}${acting ? ` · ${t.toAct}: ${acting}` : ""}`;
    if (at.seat !== undefined && at.seat !== null) {
      viewerBox.textContent = t.asSeat(at.seat, names.get(at.seat));
      viewerBox.dataset.seat = String(at.seat);
    } else if (!token()) {
      viewerBox.textContent = t.asSpectator;
    }
    const finished = at.status === "finished";
    showPlayers(finished ? at.result : null);
    why.textContent = finished ? whyEnded(at.result, n) : "";
    why.hidden = !why.textContent;
  }

  // Why the game ended and why its winners won: a resignation or an abort from the result's
  // `reason` (no game event says it), else the sentence of the game's own `game_ended`.
  function whyEnded(result, n) {
    const named = (seats) => seats.map((s) => names.get(s) ?? `seat ${s}`).join(t.and);
    const reason = result ? result.reason : undefined;
    if (reason === "resigned") {
      return t.resigned(named(result.winners), named((result.details || {}).resigned || []));
    }
    const past = events.slice(0, n).reverse();
    if (reason === "aborted") {
      const by = past.find((e) => e.type === "game.aborted");
      return t.aborted(by ? named([by.seat ?? by.data.seat]) : "");
    }
    const ended = past.find((e) => e.type === "game_ended");
    return ended && ended.sentence ? ended.sentence.text : "";
  }

  async function showDispute() {
    const n = selected;
    disputeBox.replaceChildren(h("p", { class: "muted" }, `loading the dispute file of event ${n}…`));
    try {
      const [dispute, keys] = await Promise.all([api.json(`/v1/games/${id}/audit/${n}`), api.json("/v1/keys")]);
      const listed = events[n - 1] ? events[n - 1].hash : undefined;
      const verdict = await verifyDispute(dispute, keys.keys, listed);
      const c = dispute.command;
      disputeBox.replaceChildren(
        h(
          "p",
          {},
          h(
            "span",
            { class: `badge verdict ${verdict.ok ? "ok" : "bad"}`, "data-ok": String(verdict.ok) },
            verdict.ok ? "✓ verified in this browser" : "✗ NOT verified",
          ),
          " ",
          h("span", { class: "muted" }, `event ${dispute.version}`),
        ),
        h("ul", { class: "checks", id: "proof-checks" }, verdict.checks.map((k) => h("li", { class: k.ok === null ? "na" : k.ok ? "yes" : "no" }, h("b", {}, k.check), ": ", k.detail))),
        c
          ? h(
              "dl",
              { class: "kv" },
              h("dt", {}, "command"), h("dd", {}, c.type || "—"),
              h("dt", {}, "seat"), h("dd", {}, c.seat ?? "—"),
              h("dt", {}, "received"), h("dd", {}, time(c.received_at)),
              h("dt", {}, "idempotency key"), h("dd", {}, c.idempotency_key ?? "—"),
              h("dt", {}, "outcome"), h("dd", {}, c.outcome),
            )
          : h("p", { class: "muted" }, "set-up or lobby event: no command"),
        h("h2", {}, "Rule checks (server)"),
        h("ul", { class: "checks", id: "rule-checks" }, dispute.checks.map((k) => h("li", { class: k.ok ? "yes" : "no" }, h("b", {}, k.check), ": ", k.detail))),
        h("details", {}, h("summary", {}, "command as submitted"), h("pre", {}, JSON.stringify(c ? c.body : null, null, 2))),
        h("details", {}, h("summary", {}, "whole dispute file"), h("pre", {}, JSON.stringify(dispute, null, 2))),
      );
    } catch (error) {
      disputeBox.replaceChildren(h("p", { class: "error" }, error.message || String(error)));
    }
  }

  async function showAudit() {
    try {
      const report = await api.json(`/v1/games/${id}/audit`);
      const problems = report.problems || [];
      auditBox.replaceChildren(
        report.ok
          ? badge("audit ✓ chain, rules and seed verified", "ok")
          : badge(`audit ✗ ${problems.length} problem${problems.length === 1 ? "" : "s"}`, "bad"),
      );
      auditBox.dataset.ok = String(report.ok);
    } catch (error) {
      auditBox.replaceChildren(badge(`audit: ${error.message}`, "bad"));
    }
  }

  scrubber.addEventListener("input", () => select(Number(scrubber.value)));
  first.addEventListener("click", () => select(1));
  prev.addEventListener("click", () => select(selected - 1));
  next.addEventListener("click", () => select(selected + 1));
  last.addEventListener("click", () => select(events.length));
  disputeButton.addEventListener("click", showDispute);
  const keys = (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    const moves = { ArrowLeft: selected - 1, ArrowRight: selected + 1, Home: 1, End: events.length };
    if (e.key in moves) {
      e.preventDefault();
      select(moves[e.key]);
    }
  };
  document.addEventListener("keydown", keys);

  let stopStream = () => {};
  if (doc.status === "finished") {
    showAudit();
  } else {
    statusBadge.append(" ", badge("live", "live"));
    let busy = Promise.resolve();
    stopStream = api.follow(
      id,
      (live) => {
        busy = busy.then(async () => {
          if (live.clock) {
            clock = live.clock;
            showClocks();
          }
          if (live.version <= events.length && live.status === doc.status) return;
          const fresh = await api.allEvents(id, events.length);
          const wasFollowing = following;
          events = events.concat(fresh.filter((e) => e.version > events.length));
          log.append(...fresh.map(row));
          if (live.status !== doc.status) {
            doc.status = live.status;
            statusBadge.replaceChildren(badge(live.status));
            if (live.status === "finished") showAudit();
            else statusBadge.append(" ", badge("live", "live"));
          }
          await select(wasFollowing ? events.length : selected);
        });
      },
      (error) => statusBadge.append(" ", badge(`stream: ${error.message}`, "bad")),
    );
  }
  stopPage = () => {
    stopStream();
    clearInterval(ticker);
    document.removeEventListener("keydown", keys);
  };
  await select(selected);
  app.dataset.ready = "game";
}

async function render() {
  stopPage();
  stopPage = () => {};
  app.dataset.ready = "";
  const { parts, params } = route();
  if (params.get("token") !== null) sessionStorage.setItem("manifest.token", params.get("token"));
  document.getElementById("token").value = token();
  if (parts[0] === "games" && parts[1]) await gamePage(parts[1], Number(parts[2]) || null);
  else await listPage(params);
}

document.getElementById("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("manifest.token", document.getElementById("token").value.trim());
  render();
});
window.addEventListener("hashchange", render);
render();
