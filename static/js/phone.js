// The answer of an action keeps the control that made it where it was on the screen (an
// item drawn again with a sentence above it would push it, and its Save, down), and toasts
// never cover that control (static/css/screens.css `.toasts.at-top`).
// A toast lands at the bottom edge (the whole width on a phone); when there it would cover
// the control the person used, or a button of the item that answered (after a refused move
// the item's Save), the toasts move to the top edge; when they would cover one there too,
// the edge covering fewer stands, and the control used is scrolled clear of them.

let answered = null; // {control, item, top}: what made the last request, and where it was

document.addEventListener("htmx:beforeRequest", (event) => {
  const elt = event.detail.elt;
  const asked = event.detail.requestConfig;
  // A person's action (a form posted); not a list fetched again, a badge refreshed.
  if (!(elt instanceof Element) || elt.closest(".toast") || (asked && asked.verb === "get")) {
    return;
  }
  const active = document.activeElement;
  const control = active && active !== document.body && elt.contains(active) ? active
    : elt.querySelector("button[type=submit], button") || elt;
  const item = elt.closest("li[id], .row-detail[id], .card[id], tr[id]");
  answered = {
    control: control.id || "",
    item: item ? item.id : "",
    top: control.getBoundingClientRect().top,
    kept: false,
  };
});

// Once the answer is drawn: the control with the same id back where it was.
function keepInPlace() {
  if (!answered || answered.kept || !answered.control) { return; }
  const control = document.getElementById(answered.control);
  if (!control || !control.getClientRects().length) { return; }
  answered.kept = true;
  const moved = control.getBoundingClientRect().top - answered.top;
  if (Math.abs(moved) >= 1) { window.scrollBy({ top: moved, behavior: "instant" }); }
}

function shown(element) {
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < window.innerHeight;
}

function guarded() {
  if (!answered) { return []; }
  const found = [];
  const control = answered.control ? document.getElementById(answered.control) : null;
  if (control) { found.push(control); }
  const item = answered.item ? document.getElementById(answered.item) : null;
  if (item) {
    item.querySelectorAll("button, select, input:not([type=hidden])").forEach((c) => found.push(c));
  }
  return found.filter(shown);
}

function overlaps(a, b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

function covered(toasts, controls) {
  const box = toasts.getBoundingClientRect();
  return controls.filter((control) => overlaps(box, control.getBoundingClientRect()));
}

function placeToasts() {
  keepInPlace();
  const toasts = document.getElementById("toasts");
  if (!toasts || !toasts.querySelector(".toast")) { return; }
  const controls = guarded();
  toasts.classList.remove("at-top");
  const atBottom = covered(toasts, controls).length;
  if (atBottom === 0) { return; }
  toasts.classList.add("at-top");
  const atTop = covered(toasts, controls).length;
  if (atTop > atBottom) { toasts.classList.remove("at-top"); }
  const control = answered && answered.control ? document.getElementById(answered.control) : null;
  if (control && covered(toasts, [control]).length) {
    const box = toasts.getBoundingClientRect();
    const at = control.getBoundingClientRect();
    const by = toasts.classList.contains("at-top") ? at.top - box.bottom - 8 : at.bottom - box.top + 8;
    window.scrollBy({ top: by, behavior: "instant" });
  }
}

// A toast comes as an answer's out-of-band swap, after the item it answers for is drawn.
new MutationObserver((records) => {
  if (records.some((r) => Array.from(r.addedNodes).some((n) => n instanceof Element))) {
    requestAnimationFrame(placeToasts);
  }
}).observe(document.getElementById("toasts") || document.body, { childList: true });
document.addEventListener("htmx:afterSettle", (event) => {
  const asked = event.detail.requestConfig;
  if (asked && asked.verb && asked.verb !== "get") { keepInPlace(); }
  requestAnimationFrame(placeToasts);
});
window.addEventListener("resize", () => requestAnimationFrame(placeToasts));
