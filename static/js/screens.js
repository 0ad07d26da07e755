// The screens' own script (the Content-Security-Policy allows no inline script or handler).

// A board's filters apply as you type (htmx): Enter must not submit the form and reload.
document.addEventListener("submit", (event) => {
  if (event.target.matches("form.filters")) { event.preventDefault(); }
});
