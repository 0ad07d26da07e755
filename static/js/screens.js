// The screens' own script (the Content-Security-Policy allows no inline script or handler).

// A board's filters apply as you type (htmx): Enter must not submit the form and reload.
document.addEventListener("submit", (event) => {
  if (event.target.matches("form.filters")) { event.preventDefault(); }
});

// The venue's clock on a board: it ticks from the server's own "now" (so a test's clock,
// or a server whose clock differs, still reads right), on the venue's zone. The offset is
// measured by asking the server's clock (GET /clock) a few times and keeping the answer of
// the shortest round trip, the server's reading taken as half way through it: so the page's
// own load and render never hold the clock back, and it agrees with the card moves.
function venueTime(instant, zone) {
  // In the page's language (<html lang>) as CLDR writes it, as the server drew it; English
  // keeps the server's own "Fri 10 Jul 2026 21:00:00".
  const lang = document.documentElement.lang || "en";
  if (!lang.startsWith("en")) {
    return new Intl.DateTimeFormat(lang, {
      timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    }).format(instant);
  }
  const parts = {};
  new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, weekday: "short", day: "2-digit", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
  }).formatToParts(instant).forEach((part) => { parts[part.type] = part.value; });
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year} ${parts.hour}:${parts.minute}:${parts.second}`;
}

let clockOffset = null; // ms to add to Date.now() for the server's time, once measured
const CLOCK_SAMPLES = 4;
const CLOCK_REMEASURE_MS = 10 * 60 * 1000;

async function measureClock(url) {
  let best = null;
  for (let i = 0; i < CLOCK_SAMPLES; i += 1) {
    try {
      const sent = performance.now();
      const answer = await fetch(url, { cache: "no-store", credentials: "same-origin" });
      const received = performance.now();
      const reading = await answer.json();
      const trip = received - sent;
      const server = Date.parse(reading.now);
      // performance.now() keeps time between the two readings; Date.now() at `received`.
      const offset = server + trip / 2 - (Date.now() - (performance.now() - received));
      if (!Number.isNaN(server) && (best === null || trip < best.trip)) { best = { trip, offset }; }
    } catch (error) { /* a sample lost: the others stand */ }
  }
  if (best !== null) {
    clockOffset = best.offset;
    document.querySelectorAll("time.venue-clock").forEach((clock) => {
      clock.dataset.offset = String(Math.round(clockOffset));
      clock.dataset.trip = String(Math.round(best.trip));
    });
    tickClocks();
    scheduleMinute(); // on the server's minute, now that it is known
  }
}

function serverNow() {
  const clock = document.querySelector("time.venue-clock");
  const rendered = clock && clock.dataset.offset ? Number(clock.dataset.offset) : 0;
  return new Date(Date.now() + (clockOffset === null ? rendered : clockOffset));
}

function tickClocks() {
  document.querySelectorAll("time.venue-clock").forEach((clock) => {
    if (clockOffset === null && !clock.dataset.offset) {
      // Until measured: the time the server rendered (late by the page's load).
      clock.dataset.offset = String(Date.parse(clock.getAttribute("datetime")) - Date.now());
    }
    const offset = clockOffset === null ? Number(clock.dataset.offset) : clockOffset;
    clock.textContent = venueTime(new Date(Date.now() + offset), clock.dataset.zone || "UTC");
  });
}

function startClocks() {
  const clock = document.querySelector("time.venue-clock[data-now-url]");
  tickClocks();
  if (clock) {
    measureClock(clock.dataset.nowUrl);
    setInterval(() => measureClock(clock.dataset.nowUrl), CLOCK_REMEASURE_MS);
  }
  // Each tick lands on the server's second, so the shown second changes when it does.
  const wait = () => 1000 - (serverNow().getTime() % 1000);
  const tick = () => { tickClocks(); setTimeout(tick, wait()); };
  setTimeout(tick, wait());
  // The lists whose words count minutes ("in 5 min", soon, overdue) are fetched again as
  // the server's minute turns (a moment after it, the sweep of that minute having had its
  // turn), so they change with the clock, not a minute after the page happened to load.
  scheduleMinute();
}

// The minute the shown words were drawn in: the page's render, then each refetch. The next
// refetch is 1.5 s into the minute after it, or at once when that has passed already (a page
// drawn at 19:59:59 whose script ran at 20:00:00.5 refetches at 20:00:01.5, not at 20:01:01.5).
let minuteTimer = null;
let wordsMinute = null;
function scheduleMinute() {
  clearTimeout(minuteTimer);
  const now = serverNow().getTime();
  if (wordsMinute === null) {
    const clock = document.querySelector("time.venue-clock");
    const drawn = clock ? Date.parse(clock.getAttribute("datetime")) : Number.NaN;
    wordsMinute = Math.floor((Number.isNaN(drawn) ? now : drawn) / 60000) * 60000;
  }
  const wait = Math.max(0, wordsMinute + 60000 + 1500 - now);
  minuteTimer = setTimeout(() => {
    wordsMinute = Math.floor(serverNow().getTime() / 60000) * 60000;
    document.querySelectorAll("[data-clock-refetch]").forEach((list) => {
      htmx.trigger(list, "adminium:minute");
    });
    scheduleMinute();
  }, wait);
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", startClocks);
} else {
  startClocks();
}

// A card (or a pending row) pushed on its own lands where its order puts it (the server's
// `data-order`: by when it is due), and is highlighted there for a moment. A whole list
// fetched again is in order already and is not highlighted.
function placeLanded(item) {
  const list = item.parentElement;
  const order = item.dataset.order || "";
  const next = Array.from(list.children).find(
    (other) => other !== item && other.dataset.order !== undefined && other.dataset.order > order);
  if (next && item.nextElementSibling !== next) {
    list.insertBefore(item, next);
  } else if (!next && list.lastElementChild !== item) {
    list.appendChild(item);
  }
  item.classList.add("landed");
  clearTimeout(item.landedTimer);
  item.landedTimer = setTimeout(() => item.classList.remove("landed"), 4000);
}

new MutationObserver((records) => {
  records.forEach((record) => {
    if (!(record.target instanceof Element) || !record.target.matches(".cards, tbody.ordered")) {
      return;
    }
    record.addedNodes.forEach((node) => {
      if (node instanceof Element && node.dataset.order !== undefined) { placeLanded(node); }
    });
  });
}).observe(document.documentElement, { childList: true, subtree: true });

// Keyboard focus stays where the person was after a move, an edit, a fix or a push: the
// swapped-in element with the same id takes it back; when the item left (fixed), the next
// item (else the one before, else the list's empty state) takes it.
let focusWas = null;

function rememberFocus() {
  const active = document.activeElement;
  if (!active || active === document.body || !active.id) { return; }
  const item = active.closest("li[id], tr[id], .row-detail[id], .card[id]");
  focusWas = {
    id: active.id,
    next: item && item.nextElementSibling ? item.nextElementSibling.id : "",
    previous: item && item.previousElementSibling ? item.previousElementSibling.id : "",
    list: item && item.parentElement ? item.parentElement.id : "",
  };
}

function focusInside(id) {
  const found = id ? document.getElementById(id) : null;
  if (!found || found.offsetParent === null) { return false; }
  const control = found.matches("a, button, input, select, [tabindex]") ? found
    : found.querySelector("a, button, input, select, [tabindex]");
  if (!control) { return false; }
  control.focus();
  return true;
}

function restoreFocus() {
  const was = focusWas;
  const active = document.activeElement;
  if (!was || (active && active !== document.body && active.isConnected)) { return; }
  focusWas = null;
  const list = was.list ? document.getElementById(was.list) : null;
  const empty = list ? list.querySelector(".empty") : null;
  if (focusInside(was.id) || focusInside(was.next) || focusInside(was.previous)) { return; }
  if (empty && empty.offsetParent !== null) { empty.focus(); }
}

["htmx:beforeSwap", "htmx:oobBeforeSwap", "htmx:wsBeforeMessage"].forEach((name) => {
  document.addEventListener(name, rememberFocus);
});
// A push's swap gives focus back at once, in the same task: a key pressed as the push
// lands would otherwise reach the page's body (Chromium runs input before a timer) and be
// lost. A request's swap settles first; the timer is also a second chance for a push.
["htmx:oobAfterSwap", "htmx:wsAfterMessage"].forEach((name) => {
  document.addEventListener(name, restoreFocus);
});
["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:wsAfterMessage"].forEach((name) => {
  document.addEventListener(name, () => setTimeout(restoreFocus, 0));
});

// Several set-aside rows at once: "Select all" ticks every row's box (they belong to the
// bulk form through their `form` attribute).
document.addEventListener("change", (event) => {
  if (!event.target.matches("input.pick-all")) { return; }
  document.querySelectorAll(`input.pick[form="${event.target.form.id}"]`).forEach((box) => {
    box.checked = event.target.checked;
  });
});

// A push (or an answer) carries swaps for every screen of its kind: a row this screen does
// not list has no element to replace or delete. Such a swap is dropped before htmx sees it,
// so htmx logs no `htmx:oobErrorNoTarget`: it would have done nothing.
function oobSelector(element) {
  const value = element.getAttribute("hx-swap-oob") || "true";
  const colon = value.indexOf(":");
  if (colon >= 0) { return value.slice(colon + 1).trim(); }
  return element.id ? `#${CSS.escape(element.id)}` : "";
}

function hasTarget(selector) {
  try { return selector !== "" && document.querySelector(selector) !== null; } catch { return false; }
}

htmx.defineExtension("present-targets", {
  transformResponse(text, xhr) {
    // A socket's message (no xhr): each top-level element is a swap, by id unless it says.
    const pushed = !xhr;
    if (typeof text !== "string" || (!pushed && !text.includes("hx-swap-oob"))) { return text; }
    const parsed = document.createElement("template");
    parsed.innerHTML = text;
    let dropped = false;
    const swaps = new Set(parsed.content.querySelectorAll("[hx-swap-oob]"));
    if (pushed) { Array.from(parsed.content.children).forEach((element) => swaps.add(element)); }
    swaps.forEach((element) => {
      if (!parsed.content.contains(element)) { return; }
      if (!hasTarget(oobSelector(element))) { element.remove(); dropped = true; }
    });
    return dropped ? parsed.innerHTML : text;
  },
});

// Toasts: each says what an action did; it goes after 8 s, unless the pointer or focus is
// on it (its Undo), and at once when its Undo is pressed.
function dismissLater(toast) {
  clearTimeout(toast.dismissTimer);
  toast.dismissTimer = setTimeout(() => {
    if (toast.matches(":hover, :focus-within")) { dismissLater(toast); } else { toast.remove(); }
  }, 8000);
}
new MutationObserver((records) => {
  records.forEach((record) => record.addedNodes.forEach((node) => {
    if (node instanceof Element && node.matches(".toast")) { dismissLater(node); }
  }));
}).observe(document.documentElement, { childList: true, subtree: true });
document.addEventListener("submit", (event) => {
  const toast = event.target.closest(".toast");
  if (toast) { setTimeout(() => toast.remove(), 0); }
});

// A push never draws over an item whose own request is still out (htmx marks the form
// `htmx-request`): the answer, read after the same commit, draws it, with what it said.
// Else the answer would land in the item the push had just replaced, out of the page.
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const target = event.detail.target;
  if (target && target.querySelector && target.querySelector(".htmx-request")) {
    event.detail.shouldSwap = false;
  }
});

// Nor over an item whose form the person is filling in (a field changed since it was drawn):
// their choice would be lost mid-fix. A push that takes the item away (an empty fragment: a
// delete) still does; their own Save answers with the item drawn afresh.
function markEditing(event) {
  const form = event.target.form || (event.target.closest && event.target.closest("form"));
  if (form && !form.closest(".toast")) { form.dataset.editing = "1"; }
}
document.addEventListener("input", markEditing);
document.addEventListener("change", markEditing);
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = event.detail;
  if (target && target.querySelector && target.querySelector("form[data-editing]")
      && fragment && fragment.childNodes.length) {
    event.detail.shouldSwap = false;
  }
});

// A list fetched again (the socket open again, the minute turned: its element listens for
// `adminium:back`) never draws over the person's own fix. Asked for before their answer came,
// it may have been read before their write; and while their request is out, the answer would
// land in the item the list had just replaced, out of the page. Either way the list is not
// drawn but asked for again once their answers are in, and then read after their writes.
const sentAt = new WeakMap();
let ownAnsweredAt = -1;
function refetched(detail) {
  const asked = detail.requestConfig && detail.requestConfig.elt;
  return asked instanceof Element && asked.matches("[hx-trigger*='adminium:back']") ? asked : null;
}
function askAgainWhenIn(list) {
  if (!list.isConnected) { return; }
  if (list.querySelector(".htmx-request")) { setTimeout(() => askAgainWhenIn(list), 100); return; }
  htmx.trigger(list, "adminium:back");
}
document.addEventListener("htmx:beforeRequest", (event) => {
  sentAt.set(event.detail.xhr, performance.now());
});
document.addEventListener("htmx:beforeSwap", (event) => {
  const list = refetched(event.detail);
  const asked = event.detail.requestConfig && event.detail.requestConfig.elt;
  if (!list) {
    if (asked instanceof Element && asked.closest("form")) { ownAnsweredAt = performance.now(); }
    return;
  }
  const target = event.detail.target;
  const out = target && target.querySelector && target.querySelector(".htmx-request");
  if (out || (sentAt.get(event.detail.xhr) ?? -1) < ownAnsweredAt) {
    event.detail.shouldSwap = false;
    setTimeout(() => askAgainWhenIn(list), 0);
  }
});

// What the person was told in an item ("Saved: …") stays when the list is drawn afresh.
const saidInList = new Map();
document.addEventListener("htmx:beforeSwap", (event) => {
  const target = event.detail.target;
  if (!event.detail.shouldSwap || !refetched(event.detail) || !target.querySelectorAll) { return; }
  target.querySelectorAll("[id] > .said").forEach((said) => {
    saidInList.set(said.parentElement.id, said);
  });
});
document.addEventListener("htmx:afterSwap", () => {
  saidInList.forEach((said, id) => {
    const fresh = document.getElementById(id);
    if (fresh && !fresh.querySelector(":scope > .said")) { fresh.prepend(said); }
  });
  saidInList.clear();
});

// A list fetched again keeps what the person was filling in: each field of a form being
// edited is put back in the form drawn afresh.
const editingBefore = new Map();
document.addEventListener("htmx:beforeSwap", (event) => {
  if (!event.detail.shouldSwap) { return; }
  const target = event.detail.target;
  const asked = event.detail.requestConfig && event.detail.requestConfig.elt;
  // The person's own Save or move answers with the form as it now is: nothing kept then.
  if (!target || !target.querySelectorAll || (asked && asked.closest && asked.closest("form"))) {
    return;
  }
  target.querySelectorAll("form[data-editing]").forEach((form) => {
    Array.from(form.elements).forEach((field) => {
      if (field.id && field.type !== "hidden" && field.type !== "submit") {
        editingBefore.set(field.id, { value: field.value, checked: field.checked });
      }
    });
  });
});
document.addEventListener("htmx:afterSwap", () => {
  if (!editingBefore.size) { return; }
  const kept = new Map(editingBefore);
  editingBefore.clear();
  const restore = (field) => {
    const was = kept.get(field.id);
    if (!was || !field.form) { return; }
    field.value = was.value;
    if (field.type === "checkbox" || field.type === "radio") { field.checked = was.checked; }
    field.form.dataset.editing = "1";
  };
  kept.forEach((_, id) => {  // the field picked first: it sets the value box's kind
    const field = document.getElementById(id);
    if (field && field.matches("select.field-pick")) { restore(field); followField(field); }
  });
  kept.forEach((_, id) => {
    const field = document.getElementById(id);
    if (field && !field.matches("select.field-pick")) { restore(field); }
  });
});

// A status said inside an item ("Saved: …") stays when a push draws the item again.
const saidBefore = new Map();
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const target = event.detail.target;
  const said = target && target.id ? target.querySelector(":scope > .said") : null;
  if (said) { saidBefore.set(target.id, said); }
});
document.addEventListener("htmx:oobAfterSwap", (event) => {
  const id = event.detail.target ? event.detail.target.id : "";
  const said = id ? saidBefore.get(id) : null;
  saidBefore.delete(id);
  const fresh = id ? document.getElementById(id) : null;
  if (said && fresh && !fresh.querySelector(":scope > .said")) { fresh.prepend(said); }
});

// "Fix what refused it": the value box follows the chosen field (its input type, its value
// now, as the option carries them).
function followField(select) {
  const option = select.selectedOptions[0];
  const input = select.form && select.form.querySelector("input[name=value]");
  if (!option || !input) { return; }
  input.type = option.dataset.input || "text";
  [["step", option.dataset.step], ["list", option.dataset.list],
    ["maxlength", option.dataset.maxlength]].forEach(([name, given]) => {
    if (given) { input.setAttribute(name, given); } else { input.removeAttribute(name); }
  });
  input.value = option.dataset.value || "";
}
document.addEventListener("change", (event) => {
  if (event.target.matches("select.field-pick")) { followField(event.target); }
});

// Several rows at once: "Move to" offers only the moves every picked row can make (each
// row's box lists its own); none picked, every move any row can make.
function offerCommonMoves(form) {
  const select = form.querySelector("select[name=to]");
  const button = form.querySelector("button[value=move]");
  if (!select) { return; }
  const picked = Array.from(document.querySelectorAll(`input.pick[form="${form.id}"]`))
    .filter((box) => box.checked);
  const boxes = picked.length ? picked
    : Array.from(document.querySelectorAll(`input.pick[form="${form.id}"]`));
  const common = boxes.length ? boxes
    .map((box) => new Set((box.dataset.moves || "").split(" ").filter(Boolean)))
    .reduce((all, moves) => new Set([...all].filter((move) => moves.has(move)))) : new Set();
  const open = picked.length ? common : new Set(boxes.flatMap(
    (box) => (box.dataset.moves || "").split(" ").filter(Boolean)));
  Array.from(select.options).forEach((option) => {
    option.hidden = !open.has(option.value);
    option.disabled = option.hidden;
  });
  if (select.selectedOptions[0] && select.selectedOptions[0].disabled) {
    const first = Array.from(select.options).find((option) => !option.disabled);
    select.value = first ? first.value : "";
  }
  if (button) { button.disabled = open.size === 0; }
}
document.addEventListener("change", (event) => {
  if (event.target.matches("input.pick, input.pick-all")) {
    const form = event.target.form;
    if (form) { offerCommonMoves(form); }
  }
});
document.addEventListener("htmx:load", () => {
  document.querySelectorAll("form.bulk").forEach(offerCommonMoves);
});

// A ticket's urgency by the time it is for (the card's data-time, the board's thresholds in
// data-soon / data-late seconds), on the server's clock, each second: so a card turns amber
// and red at its own minute, not at the next refetch. The words are the server's
// (web/screens/times.py `ticket_words`): "in 25 min", "due now", "late 12 min".
// In another language the words are the catalogue's, as the page drew them in the board's
// data-word-* attributes (templates/screens/_columns.html), and each unit CLDR's short one
// (Intl, as Babel's format_timedelta writes it on the server): "in 25 Min.", "vor 3 Std.".
function sayWord(name, fallback, values) {
  const holder = document.querySelector(`[data-word-${name}]`);
  const said = holder ? holder.getAttribute(`data-word-${name}`) : fallback;
  return said.replace(/%\((\w+)\)[sd]/g, (whole, key) => (key in (values || {}) ? String(values[key]) : whole));
}
function unitWords(amount, unit) {
  const lang = document.documentElement.lang || "en";
  if (lang.startsWith("en")) { return `${amount} ${{ day: "d", hour: "h", minute: "min" }[unit]}`; }
  return new Intl.NumberFormat(lang, { style: "unit", unit, unitDisplay: "short" }).format(amount);
}
function spanWords(seconds) {
  let minutes = Math.floor(seconds / 60);
  const days = Math.floor(minutes / 1440); minutes -= days * 1440;
  const hours = Math.floor(minutes / 60); minutes -= hours * 60;
  return [[days, "day"], [hours, "hour"], [minutes, "minute"]].filter(([n]) => n)
    .slice(0, 2).map(([n, unit]) => unitWords(n, unit)).join(" ");
}
function ticketWords(left) {
  const span = spanWords(Math.abs(left));
  if (!span) { return sayWord("due-now", "due now"); }
  return left > 0 ? sayWord("in", "in %(span)s", { span }) : sayWord("late", "late %(span)s", { span });
}
const KINDS = ["on-time", "soon", "late"];
const ticketKinds = new Map(); // card id -> the kind it was last seen with
let ticketsSeen = null;        // the card ids on the page once it was first drawn
function tickTickets() {
  const now = serverNow().getTime();
  document.querySelectorAll(".card[data-time]").forEach((card) => {
    const left = (Date.parse(card.dataset.time) - now) / 1000;
    const late = -left >= Number(card.dataset.late || 0);
    const kind = late ? "late" : (left <= Number(card.dataset.soon || 0) ? "soon" : "on-time");
    KINDS.forEach((name) => card.classList.toggle(name, name === kind));
    const timer = card.querySelector(".timer");
    const words = ticketWords(left);
    if (timer && timer.textContent !== words) { timer.textContent = words; }
    const was = ticketKinds.get(card.id);
    ticketKinds.set(card.id, kind);
    if (was !== undefined && was !== "late" && kind === "late") {
      card.dispatchEvent(new CustomEvent("adminium:late", { bubbles: true }));
      chime("late");
    }
  });
}

// A new ticket (a card this page has not shown before, pushed on its own) flashes where its
// time puts it, its column turned to the page that shows it, and the wall chimes.
function newTickets(added) {
  if (ticketsSeen === null) { return; }
  added.forEach((card) => {
    if (ticketsSeen.has(card.id)) { return; }
    ticketsSeen.add(card.id);
    if (card.classList.contains("final")) { return; }
    card.classList.add("new");
    flashing.set(card.id, Date.now() + FLASH_MS);
    setTimeout(() => {
      flashing.delete(card.id);
      const drawn = document.getElementById(card.id); // the card as the page now draws it
      if (drawn) { drawn.classList.remove("new"); }
    }, FLASH_MS);
    const column = card.closest(".column");
    if (column) { column.dataset.show = card.id; }
    pageWall();
    card.dispatchEvent(new CustomEvent("adminium:new-ticket", {
      bubbles: true, detail: { at: performance.timeOrigin + performance.now() } }));
    chime("new");
  });
}
// A new ticket flashes for FLASH_MS whatever redraws it meanwhile (a refetch of the columns
// landing just after the push draws the card afresh, without its class).
const FLASH_MS = 6000;
const flashing = new Map(); // card id -> when its flash ends (Date.now())
function noteTickets() {
  const now = Date.now();
  flashing.forEach((until, id) => {
    const drawn = document.getElementById(id);
    if (drawn && until > now) { drawn.classList.add("new"); }
  });
  const cards = Array.from(document.querySelectorAll(".card[id]"));
  if (ticketsSeen === null) {
    ticketsSeen = new Set(cards.map((card) => card.id));
    return;
  }
  newTickets(cards.filter((card) => !ticketsSeen.has(card.id)));
}

// The wall's sound: off until someone presses "Sound on" (a browser plays nothing before
// a gesture), remembered on this screen (localStorage). A chime is a short tone made with
// WebAudio: rising for a new ticket, falling for one turning late.
const SOUND_KEY = "adminium.wall.sound";
let audio = null;
function soundOn() { return localStorage.getItem(SOUND_KEY) === "on"; }
function chime(kind) {
  if (!document.body.classList.contains("wall") || !soundOn()) { return; }
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") { audio.resume(); }
    const notes = kind === "late" ? [660, 440] : [880, 1320];
    notes.forEach((frequency, index) => {
      const start = audio.currentTime + index * 0.18;
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = frequency;
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.3, start + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.16);
      tone.connect(gain).connect(audio.destination);
      tone.start(start);
      tone.stop(start + 0.17);
    });
  } catch (error) { return; } // no audio on this screen: the flash and the colour stand
  document.dispatchEvent(new CustomEvent("adminium:chime", { detail: { kind } }));
}
function showSound() {
  document.querySelectorAll("button.sound").forEach((button) => {
    const on = soundOn();
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = on
      ? (button.dataset.wordOff || "Sound off") : (button.dataset.wordOn || "Sound on");
  });
}
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("button.sound");
  if (!button) { return; }
  localStorage.setItem(SOUND_KEY, soundOn() ? "off" : "on");
  if (soundOn()) { audio = audio || new AudioContext(); audio.resume(); }
  showSound();
});

// The wall: type fixed (items 28 px and more at 1080p, the time larger), columns as wide
// as the board sets them (CSS), and an open column that cannot show all its tickets shows
// them a page at a time, turning each PAGE_MS, and says "+N more". Nothing is ever hidden
// below the edge of a screen nobody can scroll.
const PAGE_MS = 8000;
function pageColumn(column) {
  const cards = column.querySelector(".cards");
  const more = column.querySelector(".more");
  if (!cards || !more) { return; }
  const items = Array.from(cards.children).filter((card) => card.matches(".card"));
  items.forEach((card) => card.classList.remove("off-page"));
  const room = cards.clientHeight;
  const pages = [];
  let top = null;
  items.forEach((card) => {
    if (top === null || card.offsetTop + card.offsetHeight - top > room + 1) {
      pages.push([]);
      top = card.offsetTop;
    }
    pages[pages.length - 1].push(card);
  });
  let page = Number(column.dataset.page || 0);
  if (column.dataset.show) {
    const wanted = pages.findIndex((cardsOf) => cardsOf.some((c) => c.id === column.dataset.show));
    if (wanted >= 0) { page = wanted; }
    delete column.dataset.show;
  }
  page = pages.length ? page % pages.length : 0;
  column.dataset.page = String(page);
  column.dataset.pages = String(pages.length);
  if (pages.length <= 1) { more.textContent = ""; return; }
  pages.forEach((cardsOf, index) => {
    if (index !== page) { cardsOf.forEach((card) => card.classList.add("off-page")); }
  });
  more.textContent = sayWord("paged", "+%(count)s more · page %(page)s of %(pages)s",
    { count: items.length - pages[page].length, page: page + 1, pages: pages.length });
}
function pageWall() {
  if (!document.body.classList.contains("wall")) { return; }
  document.querySelectorAll(".column").forEach(pageColumn);
}
function turnPages() {
  document.querySelectorAll(".column[data-pages]").forEach((column) => {
    const pages = Number(column.dataset.pages);
    if (pages > 1) { column.dataset.page = String((Number(column.dataset.page) + 1) % pages); }
  });
  pageWall();
}
// A board's own search or filter draws other cards: those are not new tickets.
let searched = false;
document.addEventListener("htmx:beforeRequest", (event) => {
  if (event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form.filters")) {
    searched = true;
  }
});
["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:wsAfterMessage"].forEach((name) => {
  document.addEventListener(name, () => setTimeout(() => {
    if (searched && name === "htmx:afterSettle") { searched = false; ticketsSeen = null; }
    tickTickets(); noteTickets(); pageWall();
  }, 0));
});
window.addEventListener("resize", pageWall);
function startWall() {
  tickTickets(); noteTickets(); pageWall(); showSound();
  setInterval(tickTickets, 1000);
  if (document.body.classList.contains("wall")) { setInterval(turnPages, PAGE_MS); }
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", startWall);
} else {
  startWall();
}

// The clock's state changed (a stall said or over, paused, resumed): what the cards and the
// pending rows say of their due moves changes with it, so the lists are fetched again.
document.addEventListener("htmx:oobAfterSwap", (event) => {
  const target = event.detail.target;
  if (target instanceof Element && target.matches(".stalled-banner, .paused-banner")) {
    document.querySelectorAll("[data-clock-refetch]").forEach((list) => {
      htmx.trigger(list, "adminium:clock");
    });
  }
});
