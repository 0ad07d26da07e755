// Marks the page live or reconnecting as htmx's ws extension opens and loses its socket.
// A socket that opens starts with no word from its server: the banner it may push (Redis
// does not answer, templates/screens/_live_banner.html) is the server's to say again.
document.addEventListener("htmx:wsOpen", () => {
  document.body.dataset.live = "open";
  const banner = document.getElementById("live-banner");
  if (banner) { banner.replaceChildren(); }
});
document.addEventListener("htmx:wsClose", () => { document.body.dataset.live = "reconnecting"; });

// Signed out (here or in another tab): the server says so, then closes the socket with 4401,
// which the ws extension does not retry. Reloading lands on sign-in, back to this page after.
function signedOut() { document.body.dataset.live = "signed-out"; window.location.reload(); }
document.addEventListener("htmx:wsBeforeMessage", (event) => {
  if (event.detail.message === "adminium:signed-out") { event.preventDefault(); signedOut(); }
});
document.addEventListener("htmx:wsClose", (event) => {
  if (event.detail.event.code === 4401) { signedOut(); }
});

// More screens of this sign-in are open live than the server keeps: the oldest is told so (the
// banner) and closed with 4429, which the ws extension does not retry. Reloading makes it live.
document.addEventListener("htmx:wsClose", (event) => {
  if (event.detail.event.code === 4429) { document.body.dataset.live = "closed"; }
});
