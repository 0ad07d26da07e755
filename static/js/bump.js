// Bump and recall (web/screens/bump.py, templates/screens/_bump.html): on the board, and on a
// wall opened as ?touch=1, a ticket moves on with one tap (the board: its card's button; the
// touch wall: the card itself) to the first forward move the person may make from its state,
// and the answer's toast offers the Undo the table lists. Keys, as a bump bar sends them:
// arrows pick a ticket, Enter or Space moves it on, U presses the newest toast's Undo (else
// opens the recall list), R opens the recall list: the last 10 tickets moved on from this
// screen, each offered its undo move back where the table lists one. The plain wall has no
// #bump: it stays display-only.
(() => {
  const RECALL_SIZE = 10;
  let config = null;
  let moves = {};
  let selectAfter = null; // { gone: the bumped card's id, next: the card to select then }
  let selected = ""; // the id of the ticket picked last (a refetch may take its focus away)
  let keepFocus = false; // whether the picked ticket had the focus when it was last drawn

  function storeKey() { return `adminium:bumped:${window.location.pathname}`; }
  function bumped() {
    try { return JSON.parse(window.localStorage.getItem(storeKey()) || "[]"); } catch { return []; }
  }
  function remember(entry) {
    const kept = [entry, ...bumped().filter((other) => other.key !== entry.key)];
    window.localStorage.setItem(storeKey(), JSON.stringify(kept.slice(0, RECALL_SIZE)));
  }

  function csrfHeaders() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}"); } catch { return {}; }
  }

  // Words in the page's language: the catalogue's, as templates/screens/_bump.html drew them
  // on the config (data-word-*), their %(name)s filled here.
  function say(name, fallback, values) {
    const said = (config && config.getAttribute(`data-word-${name}`)) || fallback;
    return said.replace(/%\((\w+)\)s/g, (whole, key) => (key in (values || {}) ? String(values[key]) : whole));
  }

  function keyOf(card) { return card.id.replace(/^row-[^-]+-/, ""); }

  // A card as this screen offers it: selectable (tabindex), and on the board a button that
  // says where a tap moves it ("→ Confirmed"); a state with no move of the person's, none.
  function decorate(card) {
    if (!config || !card.matches(".board .card[id]")) { return; }
    const move = moves[card.dataset.state];
    card.tabIndex = 0;
    if (move) { card.dataset.bump = move.to; } else { delete card.dataset.bump; }
    const button = card.querySelector(":scope > .bump");
    if (!move) { if (button) { button.remove(); } return; }
    if (config.dataset.view === "touch") {
      card.setAttribute("aria-label", say("tap", "%(row)s: tap to move it to %(state)s",
        { row: `#${keyOf(card)}`, state: move.words }));
      return;
    }
    if (button) { return; }
    const made = document.createElement("button");
    made.type = "button";
    made.className = "bump";
    made.textContent = `→ ${move.words}`;
    made.setAttribute("aria-label", say("move", "Move %(row)s to %(state)s",
      { row: `#${keyOf(card)}`, state: move.words }));
    card.append(made);
  }

  function showToast(html) {
    const parsed = document.createElement("template");
    parsed.innerHTML = html;
    const toast = parsed.content.querySelector(".toast");
    const toasts = document.getElementById("toasts");
    if (toast && toasts) { toasts.append(toast); htmx.process(toast); }
  }

  async function bump(card) {
    const move = moves[card.dataset.state];
    if (!move || card.dataset.bumping) { return; }
    card.dataset.bumping = "1";
    const next = card.nextElementSibling || card.previousElementSibling;
    if (card.contains(document.activeElement)) {
      selectAfter = { gone: card.id, column: card.parentElement.id, next: next ? next.id : "" };
    }
    const body = new URLSearchParams({ seen: card.dataset.state });
    try {
      const answer = await fetch(config.dataset.bumpUrl.replace("__key__", encodeURIComponent(keyOf(card))), {
        method: "POST", body, credentials: "same-origin",
        headers: { ...csrfHeaders(), "HX-Request": "true" },
      });
      showToast(await answer.text());
      const said = answer.headers.get("Adminium-Bumped");
      if (answer.ok && said) { remember(JSON.parse(said)); }
    } catch (error) {
      showToast(`<div class="toast refused"><span class="toast-words">${say("unanswered", "Not moved on: the server did not answer.")}</span></div>`);
    } finally {
      delete card.dataset.bumping;
    }
  }

  // After a bump the selection stays in its column: the ticket after it (else the one before).
  function keepSelection() {
    if (!selectAfter) { return; }
    const gone = document.getElementById(selectAfter.gone);
    if (gone && gone.parentElement && gone.parentElement.id === selectAfter.column) { return; }
    const next = selectAfter.next ? document.getElementById(selectAfter.next) : null;
    selectAfter = null;
    if (next) { next.focus(); } else { keepFocus = false; } // its column is empty now
  }

  function cards() { return Array.from(document.querySelectorAll(".board .column .card[id]")); }

  function pick(from, key) {
    const columns = Array.from(document.querySelectorAll(".board .column"))
      .map((column) => Array.from(column.querySelectorAll(".card[id]")))
      .filter((list) => list.length);
    if (!columns.length) { return null; }
    const card = (from && from.closest(".card[id]")) || (selected && document.getElementById(selected));
    let c = card ? columns.findIndex((list) => list.includes(card)) : -1;
    if (c < 0) { return columns[0][0]; }
    let r = columns[c].indexOf(card);
    if (key === "ArrowDown") { r = Math.min(r + 1, columns[c].length - 1); }
    if (key === "ArrowUp") { r = Math.max(r - 1, 0); }
    if (key === "ArrowRight" || key === "ArrowLeft") {
      c = Math.min(Math.max(c + (key === "ArrowRight" ? 1 : -1), 0), columns.length - 1);
      r = Math.min(r, columns[c].length - 1);
    }
    return columns[c][r];
  }

  async function openRecall() {
    const dialog = document.getElementById("recall");
    const list = document.getElementById("recall-list");
    if (!dialog || !list) { return; }
    const query = new URLSearchParams();
    bumped().forEach((entry) => {
      query.append("key", entry.key); query.append("left", entry.left);
      query.append("to", entry.to); query.append("at", String(entry.at || ""));
    });
    const answer = await fetch(`${config.dataset.recallUrl}?${query}`, {
      credentials: "same-origin", headers: { "HX-Request": "true" },
    });
    list.innerHTML = await answer.text();
    htmx.process(list);
    if (!dialog.open) { dialog.showModal(); }
    const first = list.querySelector("button, [tabindex]");
    if (first) { first.focus(); }
  }

  function undo() {
    const buttons = document.querySelectorAll("#toasts .toast-undo");
    if (buttons.length) { buttons[buttons.length - 1].click(); } else { openRecall(); }
  }

  function typing(target) {
    return target instanceof Element && target.matches("input, select, textarea, [contenteditable]");
  }

  document.addEventListener("keydown", (event) => {
    if (!config || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    const dialog = document.getElementById("recall");
    if (dialog && dialog.open) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        const buttons = Array.from(dialog.querySelectorAll("button"));
        const at = buttons.indexOf(document.activeElement);
        const to = buttons[Math.min(Math.max(at + (event.key === "ArrowDown" ? 1 : -1), 0), buttons.length - 1)];
        if (to) { to.focus(); event.preventDefault(); }
      }
      return;
    }
    const card = event.target instanceof Element ? event.target.closest(".board .card[id]") : null;
    if (event.key.startsWith("Arrow")) {
      const to = pick(card, event.key);
      if (to) { to.focus(); event.preventDefault(); }
    } else if ((event.key === "Enter" || event.key === " ") && card && event.target === card) {
      event.preventDefault();
      bump(card);
    } else if (event.key === "u" || event.key === "U") {
      event.preventDefault();
      undo();
    } else if (event.key === "r" || event.key === "R") {
      event.preventDefault();
      openRecall();
    }
  });

  document.addEventListener("focusin", (event) => {
    const card = event.target instanceof Element ? event.target.closest(".board .card[id]") : null;
    if (card) { selected = card.id; }
    keepFocus = Boolean(card);
  });

  // A ticket that loses the focus while it stays on the page was left by the person; one
  // taken away by a refetch of the columns (the socket's catch-up, the minute's) keeps it.
  document.addEventListener("focusout", (event) => {
    const card = event.target instanceof Element ? event.target.closest(".board .card[id]") : null;
    if (!card) { return; }
    queueMicrotask(() => {
      const now = document.activeElement;
      const onCard = now instanceof Element && now.closest(".board .card[id]");
      if (card.isConnected && !onCard) { keepFocus = false; }
    });
  });

  function refocus() {
    if (!keepFocus || !selected) { return; }
    const active = document.activeElement;
    if (active && active !== document.body) { return; }
    const card = document.getElementById(selected);
    if (card) { card.focus({ preventScroll: true }); }
  }

  document.addEventListener("click", (event) => {
    if (!config || !(event.target instanceof Element)) { return; }
    if (event.target.closest(".recall-open")) { openRecall(); return; }
    const button = event.target.closest(".board .card[id] > .bump");
    if (button) { bump(button.parentElement); return; }
    if (config.dataset.view === "touch") {
      const card = event.target.closest(".board .card[id]");
      if (card) { bump(card); }
    }
  });

  // A recall's undo answered: the list is drawn again as the tickets now are.
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.target instanceof Element && event.target.closest("#recall")) { openRecall(); }
  });

  function start() {
    config = document.getElementById("bump");
    if (!config) { return; }
    try { moves = JSON.parse(config.dataset.moves || "{}"); } catch { moves = {}; }
    cards().forEach(decorate);
    new MutationObserver((records) => {
      records.forEach((record) => record.addedNodes.forEach((node) => {
        if (!(node instanceof Element)) { return; }
        if (node.matches(".card[id]")) { decorate(node); }
        node.querySelectorAll(".card[id]").forEach(decorate);
      }));
      keepSelection();
      refocus(); // the picked ticket drawn again by a refetch: Enter still moves it on
    }).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
