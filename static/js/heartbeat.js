// The live socket's heartbeat: the server pings every few seconds (web/live/endpoint.py) and
// the page answers each ping (and says it once as its socket opens, so the server pings it).
// A page that hears nothing for 10 s, not even a ping, is offline whatever its socket says (a
// stopped server, a hung proxy, a TV's Wi-Fi gone): the header reads "offline · last updated
// HH:MM:SS", the venue's time of the last message heard. When a message comes again the page
// is live again and fetches its lists afresh (each screen's `adminium:back` trigger), as it
// does when a dropped socket opens again.
(() => {
  const PING = "adminium:ping";
  const PONG = "adminium:pong";
  const OFFLINE_MS = 10000;
  let heardAt = null; // Date.now() of the last message heard on an open socket

  // The venue's clock as the page shows it (static/js/screens.js keeps its offset to the
  // server's clock on the clock element), at `instant`, as HH:MM:SS.
  function venueSeconds(instant) {
    const clock = document.querySelector("time.venue-clock");
    const offset = clock && clock.dataset.offset ? Number(clock.dataset.offset) : 0;
    const zone = (clock && clock.dataset.zone) || undefined;
    return new Intl.DateTimeFormat("en-GB", {
      timeZone: zone, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    }).format(new Date(instant + offset));
  }

  function sayOffline() {
    const time = venueSeconds(heardAt);
    document.querySelectorAll(".live-state").forEach((state) => {
      // In the page's language: the catalogue's words the page drew (data-word-offline).
      const words = (state.dataset.wordOffline || "offline · last updated %(time)s")
        .replace("%(time)s", time);
      let said = state.querySelector(":scope > .offline-words");
      if (!said) {
        said = document.createElement("span");
        said.className = "offline-words";
        state.prepend(said);
      }
      said.textContent = words;
    });
    document.body.dataset.live = "offline";
  }

  function heard() {
    heardAt = Date.now();
    if (document.body.dataset.live !== "offline") { return; }
    document.body.dataset.live = "open";
    document.querySelectorAll(".live-state > .offline-words").forEach((said) => said.remove());
    document.querySelectorAll("[hx-trigger*='adminium:back']").forEach((list) => {
      htmx.trigger(list, "adminium:back");
    });
  }

  document.addEventListener("htmx:wsOpen", (event) => {
    heardAt = Date.now();
    document.querySelectorAll(".live-state > .offline-words").forEach((said) => said.remove());
    event.detail.socketWrapper.send(PONG);
  });
  document.addEventListener("htmx:wsClose", () => { heardAt = null; });
  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    heard();
    if (event.detail.message === PING) {
      event.preventDefault(); // nothing to swap
      event.detail.socketWrapper.send(PONG);
    }
  });

  setInterval(() => {
    if (heardAt !== null && document.body.dataset.live === "open"
        && Date.now() - heardAt > OFFLINE_MS) {
      sayOffline();
    }
  }, 250);
})();
