"""Every word a Chinese reader sees is Chinese, on every page of both Chinese sites.

In a real Chromium, each built page of zh_CN and zh_TW (and the 404 page at a
missing address, and the search page showing results) is read the way a
reader meets it: the visible text, the ``title``, ``alt``, ``aria-label`` and
``placeholder`` attributes, the gallery cards' ``data-tooltip``, the copy buttons'
``data-tooltip``, the titles of the icons (screen readers read them as the
buttons' names) and the document's title. None of it may be English, except:

* code and program output (``code``, ``pre``, ``kbd``, ``samp``, the output
  blocks): they are shown as they ran, in every language;
* the links of the language switcher, each naming its language in that
  language (``hreflang``);
* the search results' excerpts, which quote pages checked on their own;
* names: tokens that are code, paths, URLs or numbers (``nn.DataParallel``,
  ``2.13.0+cpu``), acronyms and CamelCase names (GPU, DDP, PyTorch,
  BatchNorm), single letters (``N``), the glossary's terms that stay in
  English (locale/glossary.csv), and the names of conf/gate/english_names.txt.

This is make check's english check (gate/english.py), which finds such words in
the catalogs, at their line, before any build; here it reads what only the
built pages show: the theme's and Sphinx's words, generated text, attributes.

Screenshots of each language's gallery, a tutorial on a phone and the search
page go to _build/screenshots/.
"""

import keyword
import re
from pathlib import Path

import pytest

from gate import english
from languages import TRANSLATIONS
from site_layout import GLOSSARY

pytestmark = pytest.mark.browser  # skipped, and said at the start, without Chromium

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
GALLERY = "auto_examples/index.html"
TUTORIAL = "auto_examples/plot_01_dataparallel.html"
SEARCH = "search.html?q=DataParallel"
PHONE = {"width": 375, "height": 812}
# Everything the reader sees or hears, as (where, text) pairs.
COLLECT = """() => {
  const found = [];
  // Sphinx's search marks the query's words in the results with spans, splitting
  // "nn.DataParallel" into "nn." and "DataParallel": read them whole.
  document.querySelectorAll("span.highlighted").forEach((span) => span.replaceWith(...span.childNodes));
  // A collapsed section (the emulation, the launcher) is read when the reader opens it.
  document.querySelectorAll("details").forEach((details) => { details.open = true; });
  document.body.normalize();
  const skip = "code, pre, kbd, samp, script, style, .sphx-glr-script-out, [hreflang], #search-results .context";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || element.closest(skip)) continue;
    const icon = element.closest("svg title");
    if (icon || element.checkVisibility({ visibilityProperty: true })) {
      found.push([icon ? "icon title" : element.tagName.toLowerCase(), node.textContent]);
    }
  }
  const attributes = ["title", "alt", "aria-label", "placeholder", "tooltip", "data-tooltip"];
  for (const element of document.querySelectorAll(attributes.map((a) => `[${a}]`).join(", "))) {
    if (element.closest("[hreflang]")) continue;
    for (const name of attributes) {
      const value = element.getAttribute(name);
      if (value) found.push([`${element.tagName.toLowerCase()}@${name}`, value]);
    }
  }
  found.push(["document title", document.title]);
  return found;
}"""


def english_words(text, lang=None):
    """The English words of *text*, beyond names, code and the terms *lang* keeps in English:
    make check's english check (gate/english.py), with its names (conf/gate/english_names.txt)."""
    return english.english_words(text, english.allowed_words(GLOSSARY, lang))


def page_paths(site, lang):
    """Every page of *lang*'s site a reader can reach, as paths under its folder."""
    folder = site / lang
    paths = [html.relative_to(folder).as_posix() for html in sorted(folder.rglob("*.html"))]
    paths = [p for p in paths if not p.startswith("_") and p not in ("404.html", "search.html")]
    return paths + [SEARCH, "no/such/page.html"]


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def open_and_settle(open_page, url, page=None, **options):
    """Open *url*, in *page* if given (as a reader goes from page to page in one tab), else in a
    new one; on the search page, wait until the search has finished. Returns the page."""
    if page is None:
        page = open_page(url, **options)
    else:
        page.goto(url)
    if "search.html" in url:
        # Sphinx's search titles the results "Searching" until it has shown them all.
        page.wait_for_function(
            "typeof Search !== 'undefined' && Search.title"
            " && Search.title.innerText === Documentation.gettext('Search Results')",
            timeout=20_000,
        )
    return page


def test_the_english_detector_finds_english_and_passes_names():
    assert english_words("Toggle site navigation sidebar") == ["Toggle", "site", "navigation", "sidebar"]
    assert english_words("@pradyunsg's") == []
    assert english_words("本頁用 DDP 訓練 nn.DataParallel，rank 0 在 2.13.0+cpu 上") == []
    assert english_words("下載 Jupyter Notebook：plot_01_dataparallel.ipynb") == []
    assert english_words("在 Read the Docs 上") == []
    assert english_words("在 CPU 上模擬的 notebook") == ["notebook"]
    # A term one language keeps in English (glossary.csv) is English on the other's pages.
    assert english_words("開啟 pull request", "zh_TW") == []
    assert english_words("打开 pull request", "zh_CN") == ["pull", "request"]


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_no_english_on_any_chinese_page(open_page, base_url, site, lang):
    found = []
    page = None
    for path in page_paths(site, lang):
        page = open_and_settle(open_page, base_url + f"{lang}/{path}", page)
        for where, text in page.evaluate(COLLECT):
            # A quotation (what a program printed) is kept as it is; make check allows only
            # one that the English quotes too, which the catalogs show and a page does not.
            words = english_words(english.QUOTED.sub(" ", text), lang)
            if words:
                found.append(f"{lang}/{path}: {where}: {' '.join(words)!r} in {text.strip()[:100]!r}")
        assert page.locator(".translation-notice").count() == 0, f"{path}: fully translated"
    assert not found, "\n".join(found)


# The comments and docstrings of a page's Python code, as Pygments marks them.
CODE_COMMENTS = """() => [...document.querySelectorAll(
  "article div.highlight-Python .c1, article div.highlight-Python .c,"
  + " article div.highlight-Python .ch, article div.highlight-Python .sd")].map((s) => s.textContent)"""
# Not words for a reader: tools' directives, kept as they are in every language.
DIRECTIVE = re.compile(r"^#\s*(?:fmt:|noqa\b|type:|pragma:)")


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_code_comments_and_docstrings_are_in_the_readers_language(open_page, base_url, site, lang):
    """The code's comments and docstrings are translated (the code itself is not: the page checks skip it)."""
    found, counted, page = [], 0, None
    for path in [p for p in page_paths(site, lang) if p.startswith("auto_examples/plot_")]:
        page = open_and_settle(open_page, base_url + f"{lang}/{path}", page)
        for text in page.evaluate(CODE_COMMENTS):
            if DIRECTIVE.match(text.strip()):
                continue
            counted += 1
            code = r"``[^`]*``|[\w.]+\([^)]*\)"  # literals and calls: code, as on the page
            words = [
                w for w in english_words(re.sub(code, " ", text), lang) if not keyword.iskeyword(w)
            ]  # True, False, None: Python's own words
            if words or not re.search(r"[\u4e00-\u9fff]", text):
                found.append(f"{lang}/{path}: {text.strip()[:100]!r}")
    assert counted > 0, "no comment or docstring on any tutorial page"
    assert not found, "\n".join(found)


# Each line of a card's title lies within the card (a long word breaks, not overflows).
TITLE_INSIDE = """card => { const box = card.getBoundingClientRect();
  return [...card.querySelector("a.internal").getClientRects()]
    .every(line => line.left >= box.left && line.right <= box.right); }"""


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_gallery_cards_show_their_page_in_the_readers_language(open_page, base_url, lang):
    gallery = open_page(base_url + f"{lang}/{GALLERY}")
    shot(gallery, f"chinese-gallery-{lang}")
    cards = gallery.locator(".sphx-glr-thumbcontainer")
    assert cards.count() == len(list((ROOT / "examples").glob("plot_*.py")))
    tutorial = None
    for card in cards.all():
        link = card.locator("a.internal")
        tutorial = open_and_settle(open_page, link.evaluate("a => a.href"), tutorial)
        title = tutorial.locator("article h1").inner_text().strip()
        first = tutorial.locator("article section > p:not(.bilingual-en)").first.inner_text()
        figures = tutorial.locator("img.sphx-glr-single-img")
        # The figure is described by the paragraph that introduces it, on its page;
        # a tutorial without one has Sphinx-Gallery's placeholder, which says nothing.
        figure = figures.first.get_attribute("alt") if figures.count() else ""
        paragraphs = tutorial.locator("article p:not(.bilingual-en)").all_inner_texts()
        assert not figure or figure in [" ".join(p.split()) for p in paragraphs]
        assert link.inner_text().strip() == title
        assert card.evaluate(TITLE_INSIDE), f"{title!r} runs past its card's edge"
        assert card.locator(".sphx-glr-thumbnail-title").text_content().strip() == title
        assert card.get_attribute("data-tooltip") == " ".join(first.split())
        assert card.get_attribute("tooltip") is None  # not HTML: the Nu checker, EPUBCheck
        assert card.locator("img").get_attribute("alt") == figure
        assert "sphx_glr_" in card.locator("img").get_attribute("src")  # its own thumbnail file
        assert "no_image" not in card.locator("img").get_attribute("src")


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_copy_button_speaks_the_readers_language(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/{TUTORIAL}", viewport=PHONE)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    shot(page, f"chinese-tutorial-{lang}-375px")
    button = page.locator("button.copybtn").first
    before = [button.get_attribute("data-tooltip"), button.locator("svg title").text_content()]
    button.scroll_into_view_if_needed()
    button.click()
    page.wait_for_function("document.querySelector('button.copybtn').classList.contains('success')")
    after = [button.get_attribute("data-tooltip"), button.locator("svg title").text_content()]
    for text in before + after + [button.get_attribute("aria-label")]:
        assert text and not english_words(text), text
    assert before != after


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_search_page_says_how_many_pages_it_found(open_page, base_url, lang):
    page = open_and_settle(open_page, base_url + f"{lang}/{SEARCH}")
    status = page.locator("#search-results p.search-summary")
    found = page.locator("#search-results ul.search > li").count()
    assert str(found) in status.inner_text() and not english_words(status.inner_text())
    shot(page, f"chinese-search-{lang}")
