// Restore the reader's chosen colour palette before the page paints, as the theme's
// inline snippet would (kept in a file for the Content-Security-Policy).
(() => {
  let palette = null;
  try {
    palette = window.__md_get("__palette");
  } catch {
    return;
  }
  if (!palette || !palette.color) return;
  const color = { ...palette.color };
  if (color.media === "(prefers-color-scheme)") {
    // "Follow the system": pick the toggle that matches the current system scheme.
    const light = matchMedia("(prefers-color-scheme: light)").matches;
    const wanted = light ? "(prefers-color-scheme: light)" : "(prefers-color-scheme: dark)";
    const input = document.querySelector(`[data-md-color-media='${wanted}']`);
    if (input) {
      for (const key of ["media", "scheme", "primary", "accent"]) {
        color[key] = input.getAttribute(`data-md-color-${key}`);
      }
    }
  }
  for (const [key, value] of Object.entries(color)) {
    if (value !== null && value !== undefined) document.body.setAttribute(`data-md-color-${key}`, value);
  }
})();
