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
