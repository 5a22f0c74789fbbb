/* Search results: summarise each page from its text, not from the language
 * switcher above it, the hidden English copies (bilingual.py) or the
 * gallery's "Go to the end to download" note. Sphinx builds
 * the summary with Search.htmlToText, defined by searchtools.js, which the
 * search page loads after this file. */
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  const htmlToText = Search.htmlToText;
  Search.htmlToText = (html, anchor) => {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const skipped = ".language-switcher, .bilingual-en, .sphx-glr-download-link-note";
    doc.querySelectorAll(skipped).forEach((el) => el.remove());
    return htmlToText(doc.documentElement.outerHTML, anchor);
  };
});
