/* Search results: summarise each page from its text, not from the language
 * switcher above it or the hidden English copies (bilingual.py). Sphinx builds
 * the summary with Search.htmlToText, defined by searchtools.js, which the
 * search page loads after this file. */
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  const htmlToText = Search.htmlToText;
  Search.htmlToText = (html, anchor) => {
    const doc = new DOMParser().parseFromString(html, "text/html");
    doc.querySelectorAll(".language-switcher, .bilingual-en").forEach((el) => el.remove());
    return htmlToText(doc.documentElement.outerHTML, anchor);
  };
});
