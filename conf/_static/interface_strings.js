/* Interface strings that other projects' scripts write, in the page's language.
 *
 * page.html puts our strings (translated through sphinx.po) into the JSON
 * block #interface-strings on every page. This script hands them to:
 *
 * 1. sphinx-copybutton, which knows zh-CN but not zh-TW and writes its labels
 *    itself: the button's tooltip and icon title, "Copied!" and "Failed to
 *    copy". copybutton.js has run (it loads before this file) but has not yet
 *    made its buttons (it waits for DOMContentLoaded), so adding the page's
 *    language to its message table is enough; only its two icons were
 *    already made, in English, and get the translated titles here. The
 *    buttons' aria-label is set once they exist.
 * 2. Sphinx's search, whose zh_TW catalog leaves the result count ("Search
 *    finished, found N pages ...") empty, so the line stayed blank. Only
 *    translated pages carry this string; English keeps Sphinx's plurals.
 */
(() => {
  const block = document.getElementById("interface-strings");
  if (!block) return;
  const strings = JSON.parse(block.textContent);
  const lang = document.documentElement.lang;
  const escapeHtml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // copybutton.js writes its labels into HTML (insertAdjacentHTML, a data-tooltip
  // attribute) and as attributes (setAttribute): one string, two places. The
  // build compiles no interface translation with a character that matters in
  // either (gate/words.py); should one arrive anyway, the English stays.
  const plain = (text, english) => (/[<>&"'`\\]/.test(text) ? english : text);

  // Globals of copybutton.js (top-level let/const of a classic script).
  if (typeof messages !== "undefined" && typeof locale !== "undefined") {
    const before = messages[locale];
    messages[lang] = {
      copy: plain(strings.copy_to_clipboard, before.copy), // the tooltip: say what the button does
      copy_to_clipboard: plain(strings.copy_to_clipboard, before.copy_to_clipboard),
      copy_success: plain(strings.copy_success, before.copy_success),
      copy_failure: plain(strings.copy_failure, before.copy_failure),
    };
    const retitle = (icon, key) =>
      icon.replace(`<title>${before[key]}</title>`, `<title>${escapeHtml(messages[lang][key])}</title>`);
    iconCopy = retitle(iconCopy, "copy_to_clipboard");
    iconCheck = retitle(iconCheck, "copy_success");
    locale = lang;
    const label = () => document.querySelectorAll("button.copybtn").forEach((button) => {
      button.setAttribute("aria-label", strings.copy_to_clipboard);
    });
    // copybutton.js registered its DOMContentLoaded listener first, so its buttons exist by then.
    document.addEventListener("DOMContentLoaded", label);
  }

  if (typeof Documentation !== "undefined" && strings.search_found) {
    // One string for every plural form: the count is a number in the sentence.
    Documentation.TRANSLATIONS["Search finished, found one page matching the search query."] =
      Array(6).fill(strings.search_found);
  }
})();
