// The screens' own script (the Content-Security-Policy allows no inline script or handler).

// A board's filters apply as you type (htmx): Enter must not submit the form and reload.
document.addEventListener("submit", (event) => {
  if (event.target.matches("form.filters")) { event.preventDefault(); }
});

// The venue's clock on a board: it ticks from the server's own "now" (so a test's clock,
// or a server whose clock differs, still reads right), on the venue's zone.
function venueTime(instant, zone) {
  const parts = {};
  new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, weekday: "short", day: "2-digit", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
  }).formatToParts(instant).forEach((part) => { parts[part.type] = part.value; });
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year} ${parts.hour}:${parts.minute}:${parts.second}`;
}

function tickClocks() {
  document.querySelectorAll("time.venue-clock").forEach((clock) => {
    if (!clock.dataset.offset) {
      clock.dataset.offset = String(Date.parse(clock.getAttribute("datetime")) - Date.now());
    }
    const now = new Date(Date.now() + Number(clock.dataset.offset));
    clock.textContent = venueTime(now, clock.dataset.zone || "UTC");
  });
}
setInterval(tickClocks, 1000);

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
