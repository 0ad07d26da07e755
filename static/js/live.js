// Marks the page live or reconnecting as htmx's ws extension opens and loses its socket.
document.addEventListener("htmx:wsOpen", () => { document.body.dataset.live = "open"; });
document.addEventListener("htmx:wsClose", () => { document.body.dataset.live = "reconnecting"; });
