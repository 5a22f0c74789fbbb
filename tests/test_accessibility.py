"""Accessibility of the built site: axe-core on every page, and the keyboard.

axe-core (the copy bundled in the pinned axe-playwright-python, so it runs
offline) checks every page of every language once: every built ``.html``
page, the 404 page at a missing address, the search page showing results and
the root language chooser as a reader without JavaScript sees it. The
translated sites are checked with the English originals shown (the bilingual
toggle on), so those are checked too; their code blocks, the same as the
English ones, are checked on the English pages. Set AXE_SCRIPT to another ``axe.min.js``
to check with another axe-core release.

The keyboard tests drive the language switcher, the GPU tabs (the WAI-ARIA
tabs pattern), the bilingual toggle and the copy buttons with keys alone, and
check that each shows a focus ring and that Tab follows the reading order.
"""

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from languages import LANGUAGES, TRANSLATIONS
from catalogs.po import read  # conf/ is on sys.path

pytestmark = pytest.mark.browser  # skipped, and said at the start, without Chromium

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
TUTORIAL = "auto_examples/plot_01_dataparallel.html"
SEARCH_QUERY = "DataParallel"  # found on every language's site
BLOCKING = {"critical", "serious"}
# Rules of lesser impact that we cannot fix in our layer, each with the reason.
# Empty: every page passes every rule axe runs by default.
ACCEPTED = {}
IMPACTS = ["critical", "serious", "moderate", "minor"]
# Code never goes through a catalog, so it is the same in every language: its
# thousands of highlighted spans (three quarters of axe's time on a tutorial,
# in color-contrast) are checked on the English pages only.
CODE = 'div[class^="highlight-"] pre'


def shot(target, name):
    """Save a screenshot of a page or a locator under _build/screenshots/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(SHOTS / f"{name}.png"))


def page_paths(site):
    """Every page a reader can reach, as paths under the site root, chooser first."""
    paths = [""]
    for lang in LANGUAGES:
        folder = site / lang.sphinx
        for html in sorted(folder.rglob("*.html")):
            path = html.relative_to(folder).as_posix()
            if path.startswith("_") or path == "404.html":
                continue  # assets and downloads; the 404 page is served below
            if path == "search.html":
                path += f"?q={SEARCH_QUERY}"
            paths.append(f"{lang.sphinx}/{path}")
        paths.append(f"{lang.sphinx}/no/such/page.html")  # served as the 404 page
    return paths


def without_scripts(route):
    """Serve a page without its inline scripts (the root chooser's redirect)."""
    response = route.fetch()
    route.fulfill(response=response, body=re.sub(r"(?s)<script>.*?</script>", "", response.text()))


@pytest.fixture(scope="module")
def axe_results(browser, base_url, site):
    """Run axe once on every page; return ``{path: [violation, ...]}``."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe.from_file(os.environ["AXE_SCRIPT"]) if os.environ.get("AXE_SCRIPT") else Axe()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # Translated pages with their English originals shown (bilingual.js).
    context.add_init_script("localStorage.setItem('dp-tutorial:bilingual', 'on')")
    page = context.new_page()
    page.route(base_url, without_scripts)
    results = {}
    for path in page_paths(site):
        page.goto(base_url + path)
        if "search.html" in path:
            page.locator("#search-results ul.search li").first.wait_for(timeout=20_000)
        # Two frames: accessibility.js's ResizeObserver has marked scrollable code.
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        translated = path.split("/")[0] in TRANSLATIONS
        scope = {"exclude": [[CODE]]} if translated else None
        results[path or "index.html (root chooser)"] = axe.run(page, scope).response["violations"]
    context.close()
    print("\n" + report(results))
    return results


def report(results):
    """A table of violations by impact and rule: pages affected, elements."""
    pages, nodes = Counter(), Counter()
    for violations in results.values():
        for v in violations:
            pages[v["impact"], v["id"]] += 1
            nodes[v["impact"], v["id"]] += len(v["nodes"])
    lines = [f"axe-core over {len(results)} pages: {sum(nodes.values())} violating elements"]
    for key in sorted(pages, key=lambda k: (IMPACTS.index(k[0]), k[1])):
        lines.append(f"  {key[0]:9} {key[1]:30} {pages[key]:3} pages {nodes[key]:4} elements")
    return "\n".join(lines)


def failures(results, keep):
    """``path: rule (impact): targets`` for each violation that *keep* accepts."""
    return [
        f"{path}: {v['id']} ({v['impact']}): {v['help']}: "
        + ", ".join(" ".join(n["target"]) for n in v["nodes"][:5])
        for path, violations in results.items()
        for v in violations
        if keep(v)
    ]


def test_every_page_was_checked(axe_results):
    languages = {path.split("/")[0] for path in axe_results}
    assert {lang.sphinx for lang in LANGUAGES} <= languages
    for lang in LANGUAGES:
        for page in ("index.html", TUTORIAL, "translation-status.html", "no/such/page.html"):
            assert f"{lang.sphinx}/{page}" in axe_results
        assert f"{lang.sphinx}/search.html?q={SEARCH_QUERY}" in axe_results


def test_no_critical_or_serious_violation_on_any_page(axe_results):
    found = failures(axe_results, lambda v: v["impact"] in BLOCKING)
    assert not found, "\n".join(found)


def test_no_other_violation_beyond_the_accepted_ones(axe_results):
    found = failures(axe_results, lambda v: v["impact"] not in BLOCKING and v["id"] not in ACCEPTED)
    assert not found, "\n".join(found)


# -- Keyboard ------------------------------------------------------------------

FOCUS_RING = """() => {
  const el = document.activeElement;
  // A tab's ring is drawn round its label (site.css).
  const box = el.getAttribute("role") === "tab" ? el.parentElement : el;
  const style = getComputedStyle(box);
  return style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 1
    && parseFloat(getComputedStyle(el).opacity) > 0;
}"""


def assert_focus_ring(page):
    """Wait up to 2 s (copy buttons fade in) for the focused element's ring."""
    page.wait_for_function(FOCUS_RING, timeout=2_000)


def focused(page, attribute=None):
    """The focused element's outer HTML start, or one of its attributes."""
    if attribute:
        return page.evaluate(f"document.activeElement.getAttribute({attribute!r})")
    return page.evaluate("document.activeElement.outerHTML.slice(0, 120)")


def tab_until(page, selector, limit=60):
    """Press Tab until the focused element matches *selector*; return the presses."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return presses
    raise AssertionError(f"{selector} never got the focus in {limit} presses of Tab")


def sphinx_po(lang):
    """The interface catalog of *lang*, for the translated labels."""
    return read(ROOT / "locale" / lang / "LC_MESSAGES" / "sphinx.po")


def test_language_switcher_works_from_the_keyboard(open_page, base_url):
    page = open_page(base_url + f"zh_TW/{TUTORIAL}")
    tab_until(page, "article *")
    # The switcher is the first stop in the article, before any of its text.
    assert page.evaluate("document.activeElement.matches('.language-switcher a')")
    assert focused(page, "hreflang") == "en"
    assert_focus_ring(page)
    shot(page.locator(".language-switcher"), "keyboard-switcher-focus-zh_TW")
    page.keyboard.press("Tab")
    assert focused(page, "hreflang") == "zh-CN"
    page.keyboard.press("Enter")
    page.wait_for_url(base_url + f"zh_CN/{TUTORIAL}")


def test_gpu_tabs_follow_the_wai_aria_tabs_pattern(open_page, base_url):
    page = open_page(base_url + f"en/{TUTORIAL}")
    tabs = page.locator(".gpu-tab-set").first.get_by_role("tab")
    names = tabs.all_inner_texts()
    assert [name.split()[0] for name in names] == ["1", "2", "3", "8"]
    assert page.locator(".gpu-tab-set").first.get_by_role("tablist").count() == 1

    def selected():
        return [t.get_attribute("aria-selected") == "true" for t in tabs.all()].index(True)

    def visible_panel():
        panel = page.locator(".gpu-tab-set").first.get_by_role("tabpanel")
        assert panel.count() == 1  # hidden panels are out of the accessibility tree
        return panel.get_attribute("aria-labelledby")

    # Only the selected tab is in the Tab order; Tab reaches it, then its panel.
    tab_until(page, "[role=tab]", limit=200)
    assert selected() == 0 and focused(page, "aria-selected") == "true"
    assert_focus_ring(page)
    for key, expected in [
        ("ArrowRight", 1),
        ("ArrowRight", 2),
        ("End", 3),
        ("ArrowRight", 0),
        ("ArrowLeft", 3),
        ("Home", 0),
        ("ArrowLeft", 3),
    ]:
        page.keyboard.press(key)
        assert selected() == expected and focused(page, "role") == "tab", key
        assert focused(page, "id") == visible_panel()
        assert_focus_ring(page)
    # The arrows moved between tabs; they did not turn the page (navigation_with_keys).
    assert page.url == base_url + f"en/{TUTORIAL}"
    output = page.locator(".gpu-tab-set").first.get_by_role("tabpanel").locator(".sphx-glr-script-out pre")
    assert output.inner_text().startswith("# 8 ")
    shot(page.locator(".gpu-tab-set").first, "keyboard-tabs-8-gpus-en")
    page.keyboard.press("Tab")
    assert focused(page, "role") == "tabpanel"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert focused(page, "role") != "tab"  # the other tabs are not Tab stops


def test_bilingual_toggle_works_from_the_keyboard(open_page, base_url):
    page = open_page(base_url + "zh_CN/index.html")
    english = page.locator("article p.bilingual-en").first
    assert english.is_hidden()
    tab_until(page, "#bilingual-toggle")
    assert_focus_ring(page)
    page.keyboard.press("Space")
    assert english.is_visible() and english.get_attribute("lang") == "en"
    shot(page.locator(".language-switcher"), "keyboard-bilingual-toggle-zh_CN")
    page.keyboard.press("Space")
    assert english.is_hidden()


@pytest.mark.parametrize("lang", ["en", "zh_TW"])
def test_copy_buttons_work_from_the_keyboard(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/{TUTORIAL}")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    tab_until(page, "button.copybtn", limit=200)
    assert_focus_ring(page)  # visible and ringed, though the mouse is elsewhere
    label = focused(page, "aria-label")
    expected = "Copy to clipboard" if lang == "en" else sphinx_po(lang).get("Copy to clipboard").string
    assert label == expected
    code = page.evaluate("document.activeElement.previousElementSibling.innerText")
    shot(page.locator("button.copybtn:focus").locator("xpath=.."), f"keyboard-copy-button-{lang}")
    page.keyboard.press("Enter")
    assert page.evaluate("navigator.clipboard.readText()").strip() == code.strip()


def test_tab_order_is_the_reading_order(open_page, base_url):
    page = open_page(base_url + f"zh_TW/{TUTORIAL}")
    tab_until(page, ".language-switcher a")
    seen = []
    while page.evaluate("document.querySelector('article').contains(document.activeElement)"):
        box = page.evaluate(
            "(() => { const r = document.activeElement.getBoundingClientRect();"
            " return [r.top + scrollY, r.left, r.bottom + scrollY]; })()"
        )
        seen.append((box, focused(page)))
        page.keyboard.press("Tab")
        assert len(seen) < 500, "Tab never left the article"
    assert len(seen) > 10
    for (before, what_before), (after, what) in zip(seen, seen[1:]):
        same_line = after[0] < before[2]  # starts above the previous one's bottom
        assert after[0] >= before[0] - 1 and (not same_line or after[1] >= before[1] - 1), (
            f"focus went back up or left:\n  {what_before}\n  then {what}"
        )


def test_chinese_pages_mark_english_code_but_not_its_labels(open_page, base_url):
    page = open_page(base_url + f"zh_TW/{TUTORIAL}")
    blocks = page.locator('article div[class*="highlight-"] pre')
    assert blocks.count() > 10
    # English code is English; a block whose comments are translated is not marked.
    marks = blocks.evaluate_all("pres => pres.map(p => [p.lang, /[\\u3400-\\u9fff]/.test(p.textContent)])")
    assert {lang for lang, chinese in marks if not chinese} == {"en"}
    assert {lang for lang, chinese in marks if chinese} == {""}
    # The "Out:" label and the copy buttons around the code keep the page's language.
    around = page.evaluate(
        "[...document.querySelectorAll('.sphx-glr-script-out, button.copybtn')]"
        ".map(el => el.closest('[lang]').lang)"
    )
    assert set(around) == {"zh-TW"}
    # A block with Chinese in it (a catalog entry) is not English.
    guide = open_page(base_url + "zh_TW/translating.html")
    po_block = guide.locator("article pre", has_text="msgstr").first
    assert "本站" in po_block.inner_text() and po_block.get_attribute("lang") is None
