/* Keyboard and screen-reader fixes that need the rendered page.
 *
 * 1. Tab sets (the GPU and world-size results) become WAI-ARIA tabs.
 *    sphinx-design writes each tab as a hidden radio button, a label and a
 *    panel: without this script the radios still switch tabs with the arrow
 *    keys, but a screen reader hears radio buttons. With it, each label's text
 *    is a role="tab" element in one tablist (aria-owns, so the markup and
 *    sphinx-design's CSS stay as they are), Left/Right/Home/End move between
 *    tabs and select them, only the selected tab is in the Tab order, and the
 *    radios are out of reach (they keep driving which panel the CSS shows).
 * 2. A code or output block, a table or a figure too big for its box scrolls; a
 *    keyboard user can scroll it only if it can take focus, so an
 *    overflowing <pre>, table wrapper or figure frame gets tabindex=0 (and loses it when
 *    it no longer overflows). Left/Right then scroll it instead of turning
 *    the page (Sphinx's navigation_with_keys).
 * 3. On the Chinese sites, code and its output are English (they never go
 *    through a catalog): lang="en" on each <pre> without Chinese in it. Not
 *    on the block around it, whose "Out:" label and copy button are in the
 *    page's language.
 */
(() => {
  // With navigation_with_keys (conf.py), Sphinx's doctools.js turns the page on
  // Left/Right anywhere but in form fields: in a tab list or a scrolled box
  // those keys are the reader's, not the page's.
  const keepArrowKeys = (event) => {
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") event.stopPropagation();
  };

  const tabSet = (set) => {
    const items = [...set.querySelectorAll(":scope > input[type=radio]")].map((input) => {
      const label = input.nextElementSibling;
      const panel = label.nextElementSibling;
      const tab = document.createElement("span");
      tab.id = `${input.id}-tab`;
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", panel.id);
      tab.append(...label.childNodes);
      label.append(tab);
      // The label draws the focus ring (site.css), for keyboard focus only.
      tab.addEventListener("focus", () => label.classList.toggle("focus-ring", tab.matches(":focus-visible")));
      tab.addEventListener("blur", () => label.classList.remove("focus-ring"));
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0; // its text is reachable from the tab with one Tab
      input.tabIndex = -1;
      input.setAttribute("aria-hidden", "true");
      return { input, label, tab };
    });
    if (!items.length) return;
    const list = document.createElement("div");
    list.setAttribute("role", "tablist");
    list.setAttribute("aria-owns", items.map(({ tab }) => tab.id).join(" "));
    set.prepend(list);

    const sync = () => items.forEach(({ input, tab }) => {
      tab.setAttribute("aria-selected", String(input.checked));
      tab.tabIndex = input.checked ? 0 : -1;
    });
    const select = (item) => {
      if (!item.input.checked) {
        item.input.checked = true;
        item.input.dispatchEvent(new Event("change", { bubbles: true }));
      }
      sync();
      item.tab.focus();
    };
    items.forEach((item, i) => {
      item.input.addEventListener("change", sync);
      // A click on a label would check and focus its hidden radio: select the tab instead.
      item.label.addEventListener("click", (event) => {
        event.preventDefault();
        select(item);
      });
      item.tab.addEventListener("keydown", (event) => {
        const last = items.length - 1;
        const keys = { ArrowRight: i === last ? 0 : i + 1, ArrowLeft: i === 0 ? last : i - 1, Home: 0, End: last };
        if (!(event.key in keys) || event.altKey || event.ctrlKey || event.metaKey) return;
        event.preventDefault();
        event.stopPropagation(); // see keepArrowKeys
        select(items[keys[event.key]]);
      });
    });
    sync();
  };

  const scrollableCode = () => {
    const observer = new ResizeObserver((entries) => entries.forEach(({ target }) => {
      if (target.scrollWidth > target.clientWidth || target.scrollHeight > target.clientHeight) target.tabIndex = 0;
      else target.removeAttribute("tabindex");
    }));
    document.querySelectorAll("article pre, article .table-wrapper, article .figure-frame").forEach((box) => {
      observer.observe(box);
      box.addEventListener("keydown", keepArrowKeys);
    });
  };

  const englishCode = () => {
    if (document.documentElement.lang === "en") return;
    document.querySelectorAll('article div[class*="highlight-"] pre').forEach((pre) => {
      if (!/[\u3400-\u9fff]/.test(pre.textContent)) pre.lang = "en";
    });
  };

  const run = () => {
    document.querySelectorAll(".sd-tab-set").forEach(tabSet);
    scrollableCode();
    englishCode();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
})();
