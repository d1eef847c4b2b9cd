// Abbreviations open on tap (issue 37): a phone has no hover, and the theme's tooltips
// stay off (they cost about 70 ms per instant navigation: mkdocs.yml). A tap or click
// on an abbreviation shows its expansion right after it, in the text, so that it is
// never cut at the screen's edge; another tap, or a tap elsewhere, hides it. Screen
// readers have the title already.

const OPEN = "bm-abbr-open";

document.addEventListener("click", (event) => {
  const abbr = event.target instanceof Element ? event.target.closest("abbr[title]") : null;
  for (const open of document.querySelectorAll(`abbr.${OPEN}`)) {
    if (open !== abbr) open.classList.remove(OPEN);
  }
  if (abbr) abbr.classList.toggle(OPEN);
});
