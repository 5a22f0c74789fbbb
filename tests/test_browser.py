"""The reader's experience, checked in a real headless Chromium (Playwright).

The built site (the ``site`` fixture) is served on 127.0.0.1 the way a host
serves it (``base_url`` in conftest.py): missing pages get the language's own
404 page. Without Chromium the tests are skipped (the ``browser`` fixture).
Every test saves a screenshot of what it checked under _build/screenshots/.
"""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser  # skipped, and said at the start, without Chromium

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
TUTORIAL = "auto_examples/plot_01_dataparallel.html"
LANGS = ["en", "zh_CN", "zh_TW"]
HTML_LANG = {"en": "en", "zh_CN": "zh-CN", "zh_TW": "zh-TW"}
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}
MAX_FIRST_LOAD = 400_000  # bytes, uncompressed, every file of the tutorial's first load


def shot(target, name):
    """Save a screenshot of a page or a locator under _build/screenshots/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(SHOTS / f"{name}.png"))


def html_lang(page):
    return page.evaluate("document.documentElement.lang")


def test_language_switcher_lands_on_the_same_page(open_page, base_url):
    page = open_page(base_url + f"zh_TW/{TUTORIAL}")
    shot(page, "switcher-1-zh_TW")
    for lang in ["zh_CN", "en"]:
        page.click(f".language-switcher a[hreflang='{HTML_LANG[lang]}']")
        page.wait_for_url(base_url + f"{lang}/{TUTORIAL}")
        assert html_lang(page) == HTML_LANG[lang]
        assert page.locator("article h1").count() == 1
        shot(page, f"switcher-{2 if lang == 'zh_CN' else 3}-{lang}")


@pytest.mark.parametrize(
    "locale, lang",
    [("zh-TW", "zh_TW"), ("zh-HK", "zh_TW"), ("zh-CN", "zh_CN"), ("zh", "zh_CN"), ("fr-FR", "en")],
)
def test_root_sends_each_browser_to_its_language(open_page, base_url, locale, lang):
    page = open_page(base_url, locale=locale)
    page.wait_for_url(base_url + f"{lang}/index.html")
    assert html_lang(page) == HTML_LANG[lang]
    shot(page, f"root-redirect-{locale}")


@pytest.mark.parametrize(
    "lang, query, expected",
    [
        ("zh_CN", "批次", TUTORIAL),  # glossary: batch
        ("zh_TW", "批次", TUTORIAL),
        ("en", "DataParallel", TUTORIAL),
        # Glossary terms are single search words (conf/extensions/chinese_search.py).
        ("zh_CN", "数据并行", "index.html"),
        ("zh_TW", "資料平行", "index.html"),
    ],
)
def test_search_finds_words_in_each_language(open_page, base_url, lang, query, expected):
    page = open_page(base_url + f"{lang}/search.html?q={query}")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=15_000)
    hrefs = results.evaluate_all("links => links.map(a => a.href.split('#')[0].split('?')[0])")
    assert base_url + f"{lang}/{expected}" in hrefs, hrefs
    # Summaries start with the page's own words, not the gallery's download note.
    tutorial = open_page(base_url + f"{lang}/{TUTORIAL}")
    note = tutorial.locator(".sphx-glr-download-link-note p").last.inner_text().strip()
    page.locator("#search-results p.context").first.wait_for(timeout=15_000)
    for summary in page.locator("#search-results p.context").all_inner_texts():
        assert note not in summary
    shot(page, f"search-{lang}-{expected.split('/')[-1][:-5]}")


@pytest.mark.parametrize("lang", ["en", "zh_TW"])
def test_copy_button_copies_the_code_and_nothing_else(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/{TUTORIAL}")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    assert page.locator(".sphx-glr-script-out button.copybtn").count() == 0
    # The cell of the training loop, whose output prints "Outside: input size".
    cell = page.locator("div.highlight-Python div.highlight", has_text="for data in rand_loader").first
    cell.scroll_into_view_if_needed()
    cell.hover()
    cell.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == cell.locator("pre").inner_text().strip()
    assert "for data in rand_loader:" in copied
    assert "torch.Size([" not in copied and ">>>" not in copied  # no output, no prompts
    shot(page, f"copy-button-{lang}")


@pytest.mark.parametrize("lang, viewport", [("en", DESKTOP), ("zh_CN", PHONE), ("zh_TW", PHONE)])
def test_tabs_switch_between_gpu_counts(open_page, base_url, lang, viewport):
    page = open_page(base_url + f"{lang}/{TUTORIAL}", viewport=viewport)
    labels = page.locator(".gpu-tab-set > label")
    assert labels.count() == 4
    assert [t.split()[0] for t in labels.all_inner_texts()] == ["1", "2", "3", "8"]
    labels.nth(3).click()
    outputs = page.locator(".gpu-tab-set .sd-tab-content .sphx-glr-script-out pre")
    visible = [o for o in outputs.all() if o.is_visible()]
    assert len(visible) == 1
    first_batch = visible[0].inner_text().split("Outside:")[0]
    assert first_batch.startswith("# 8 ")
    assert first_batch.count("In Model:") == 8  # one line per replica
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"page is {width}px wide, wider than the screen"
    shot(page.locator(".gpu-tab-set"), f"tabs-8-gpus-{lang}-{viewport['width']}px")


def test_bilingual_toggle_shows_english_and_is_remembered(open_page, base_url):
    page = open_page(base_url + f"zh_TW/{TUTORIAL}", viewport=PHONE)
    toggle = page.locator("#bilingual-toggle")
    english = page.locator("article p.bilingual-en").first
    assert not toggle.is_checked() and english.is_hidden()  # off by default
    toggle.check()
    assert english.is_visible()
    assert english.get_attribute("lang") == "en"
    translation = english.locator("xpath=preceding-sibling::*[1]")
    assert "translated" in translation.get_attribute("class").split()
    assert translation.inner_text().strip() != english.inner_text().strip()
    english.scroll_into_view_if_needed()
    shot(page, "bilingual-on-zh_TW-375px")
    page.set_viewport_size(DESKTOP)
    shot(page, "bilingual-on-zh_TW-1280px")

    page.click(".language-switcher a[hreflang='zh-CN']")  # another page, another language
    page.wait_for_url(base_url + f"zh_CN/{TUTORIAL}")
    page.goto(base_url + "zh_TW/index.html")
    assert page.locator("#bilingual-toggle").is_checked()
    assert page.evaluate("document.documentElement.classList.contains('bilingual')")
    copies = page.locator("article p.bilingual-en")
    assert copies.count() == 0 or copies.first.is_visible()
    shot(page, "bilingual-remembered-zh_TW-index")
    page.locator("#bilingual-toggle").uncheck()
    page.reload()
    assert not page.locator("#bilingual-toggle").is_checked()


def test_english_pages_have_no_bilingual_toggle_or_copies(open_page, base_url):
    page = open_page(base_url + f"en/{TUTORIAL}")
    assert page.locator("#bilingual-toggle").count() == 0
    assert page.locator(".bilingual-en, .untranslated").count() == 0


@pytest.mark.parametrize("lang", LANGS)
def test_404_page_links_home_and_to_the_other_languages(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/no/such/page.html", viewport=PHONE)
    assert html_lang(page) == HTML_LANG[lang]
    assert page.locator("article h1").inner_text().strip()
    # Absolute asset paths: the theme's stylesheet applies even this deep.
    assert page.evaluate("getComputedStyle(document.body).getPropertyValue('--font-stack')")
    shot(page, f"404-{lang}-375px")
    page.set_viewport_size(DESKTOP)
    shot(page, f"404-{lang}-1280px")
    targets = {page.locator("a.not-found-home").get_attribute("href"): lang}
    for other in LANGS:
        if other != lang:
            link = page.locator(f".not-found-languages a[hreflang='{HTML_LANG[other]}']")
            targets[link.get_attribute("href")] = other
    assert len(targets) == 3
    for href, target in targets.items():
        response = page.goto(base_url.rstrip("/") + href)
        assert response.status == 200 and html_lang(page) == HTML_LANG[target]


@pytest.mark.parametrize("lang", LANGS)
def test_downloads_are_visible_and_work(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/{TUTORIAL}")
    for suffix in (".py", ".ipynb"):
        link = page.locator(f".sphx-glr-download a[href$='{suffix}']")
        assert link.count() == 1 and link.is_visible()
        response = page.request.get(link.evaluate("a => a.href"))
        assert response.ok
        if suffix == ".py":
            assert "nn.DataParallel(model)" in response.text()
        else:
            assert json.loads(response.body())["cells"]
    shot(page.locator(".sphx-glr-footer"), f"downloads-{lang}")


@pytest.mark.parametrize("lang", LANGS)
def test_phone_layout_has_no_sideways_scroll(open_page, base_url, lang):
    page = open_page(base_url + f"{lang}/{TUTORIAL}", viewport=PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"page is {width}px wide on a 375px screen"
    if lang != "en":
        style = page.evaluate(
            "(() => { const s = getComputedStyle(document.querySelector('article section > p:not(.bilingual-en)'));"
            " return {font: s.fontFamily, ratio: parseFloat(s.lineHeight) / parseFloat(s.fontSize)}; })()"
        )
        assert "Noto Sans CJK" in style["font"] and style["ratio"] >= 1.7, style
    shot(page, f"phone-{lang}-375px")


@pytest.mark.parametrize("lang", LANGS)
def test_tutorial_first_load_weighs_at_most_400_kb(browser, base_url, lang):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sizes = {}

    def record(response):
        if 200 <= response.status < 300 or response.status == 404:
            sizes[response.url.replace(base_url, "/")] = len(response.body())

    page.on("response", record)
    page.goto(base_url + f"{lang}/{TUTORIAL}", wait_until="networkidle")
    shot(page, f"weight-{lang}")
    context.close()
    total = sum(sizes.values())
    print(f"\n{lang}: tutorial first load {total / 1000:.1f} kB in {len(sizes)} files")
    for url, size in sorted(sizes.items(), key=lambda item: -item[1])[:5]:
        print(f"  {size / 1000:7.1f} kB  {url}")
    assert total <= MAX_FIRST_LOAD, f"{lang}: {total} bytes > {MAX_FIRST_LOAD}"


PHONE_390 = {"width": 390, "height": 844}
TUTORIALS = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))

# Each figure: its size as shown, its own size, and its frame's (phone layout).
FIGURES = """() => [...document.querySelectorAll('article img.sphx-glr-single-img')].map(img => {
  const frame = img.closest('.figure-frame');
  return {src: img.getAttribute('src'), shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
          overflows: frame.scrollWidth > frame.clientWidth, tabindex: frame.getAttribute('tabindex')};
})"""


def axis_text_px(src):
    """The size in px, at the figure's own size, of the smallest tick label of figure *src*."""
    import pickle

    from extensions.localized_examples import PICKLE

    name = Path(src).name  # the English figure: the translations redraw it, same sizes
    with open(ROOT / "docs/auto_examples/images" / (name + PICKLE), "rb") as kept:
        figure = pickle.load(kept)
    sizes = [
        label.get_fontsize()
        for ax in figure.axes
        for axis in (ax.xaxis, ax.yaxis)
        for label in axis.get_ticklabels()
        if label.get_text()
    ]
    return min(sizes) * figure.dpi / 72


@pytest.mark.parametrize("lang", LANGS)
def test_figures_keep_their_words_as_large_as_the_body_on_a_phone(open_page, base_url, lang):
    """At 390 px a figure is shown at its own size, its axes' words at least the body's
    size, in a frame that scrolls sideways and takes keyboard focus; the page does not scroll."""
    checked = 0
    for tutorial in TUTORIALS:
        page = open_page(base_url + f"{lang}/auto_examples/{tutorial}.html", viewport=PHONE_390)
        page.wait_for_function("[...document.images].every(img => img.complete)")
        # accessibility.js sets a frame's tabindex from a ResizeObserver, whose callbacks run
        # in a rendering step after layout: two frames later they have (under load, not sooner).
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        body = page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector("
            "'article section > p:not(.bilingual-en)')).fontSize)"
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_390["width"], tutorial
        for figure in page.evaluate(FIGURES):
            scale = figure["shown"] / figure["natural"]
            assert scale == 1, figure
            assert axis_text_px(figure["src"]) * scale >= body, figure
            assert figure["tabindex"] == ("0" if figure["overflows"] else None), figure
            checked += 1
        if tutorial == TUTORIALS[0]:
            page.locator(".figure-frame").first.scroll_into_view_if_needed()
            shot(page, f"figure-{lang}-390px")
    assert checked


# Each heading: its lines of text (its text's boxes grouped by their middle), its
# height in lines, and the width of its last line of text.
HEADINGS = """() => [...document.querySelectorAll('article :is(h1, h2, h3)')].map(h => {
  const style = getComputedStyle(h);
  const lineHeight = parseFloat(style.lineHeight);
  const range = document.createRange();
  range.setStart(h, 0);
  range.setEndBefore(h.querySelector('a.headerlink') || h.lastChild);
  const lines = [];
  for (const r of [...range.getClientRects()].filter(r => r.width > 0)) {
    const middle = (r.top + r.bottom) / 2;
    const line = lines.find(l => Math.abs(l.middle - middle) < lineHeight / 2);
    if (line) { line.left = Math.min(line.left, r.left); line.right = Math.max(line.right, r.right); }
    else lines.push({middle, left: r.left, right: r.right});
  }
  lines.sort((a, b) => a.middle - b.middle);
  const last = lines[lines.length - 1];
  return {text: h.textContent.replace('¶', '').trim(), textLines: lines.length,
          lines: Math.round((h.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)) / lineHeight),
          lastLine: last.right - last.left, em: parseFloat(style.fontSize)};
})"""


@pytest.mark.parametrize("viewport", [PHONE_390, DESKTOP], ids=["390px", "1280px"])
@pytest.mark.parametrize("lang", LANGS)
def test_headings_have_no_empty_line_and_no_character_alone(open_page, base_url, lang, viewport):
    for page_name in ["index", *(f"auto_examples/{t}" for t in TUTORIALS)]:
        page = open_page(base_url + f"{lang}/{page_name}.html", viewport=viewport)
        for heading in page.evaluate(HEADINGS):
            # The hidden "¶" takes no line of its own: as many lines as lines of text.
            assert heading["lines"] == heading["textLines"], (page_name, heading)
            if heading["textLines"] > 1:  # a wrapped heading's last line holds more than a character
                assert heading["lastLine"] > 1.5 * heading["em"], (page_name, heading)
    shot(page, f"headings-{lang}-{viewport['width']}px")
