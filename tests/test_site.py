"""End-to-end checks of the built trilingual site (one shared build)."""

import copy
import functools
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from languages import LANGUAGES  # conf/ is on sys.path
from catalogs.po import read

PAGES = [
    "index",
    "translating",
    "auto_examples/index",
    "auto_examples/plot_01_dataparallel",
    "auto_examples/plot_02_dataparallel_in_depth",
    "auto_examples/plot_03_distributed_data_parallel",
]


@functools.cache
def read_page(site, lang, page):
    """Parse one built page, once per worker: the tests read it, and change only copies."""
    return BeautifulSoup((site / lang / f"{page}.html").read_text("utf-8"), "html.parser")


def resolve(page_file, href):
    """Resolve a relative link the way a browser does (no network)."""
    return (page_file.parent / href.split("#")[0]).resolve()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_exists_in_every_language(site, languages, page):
    for lang in languages:
        assert (site / lang.sphinx / f"{page}.html").is_file(), (lang.sphinx, page)


@pytest.mark.parametrize("page", PAGES)
def test_html_lang_and_hreflang(site, languages, page):
    for lang in languages:
        soup = read_page(site, lang.sphinx, page)
        assert soup.html["lang"] == lang.html
        alternates = {
            link["hreflang"]: link["href"]
            for link in soup.find_all("link", rel="alternate")
            if link.get("hreflang")
        }
        assert set(alternates) == {"en", "zh-CN", "zh-TW", "x-default"}
        page_file = site / lang.sphinx / f"{page}.html"
        for other in languages:
            target = resolve(page_file, alternates[other.html])
            assert target == (site / other.sphinx / f"{page}.html").resolve()


@pytest.mark.parametrize("page", PAGES)
def test_switcher_links_to_the_same_page(site, languages, page):
    for lang in languages:
        soup = read_page(site, lang.sphinx, page)
        switcher = soup.select_one("nav.language-switcher")
        assert switcher is not None, "no language switcher"
        links = {a["hreflang"]: a["href"] for a in switcher.find_all("a")}
        current = switcher.select_one("[aria-current=page]")
        assert current.get_text(strip=True) == lang.name
        others = [other for other in languages if other != lang]
        assert set(links) == {other.html for other in others}
        page_file = site / lang.sphinx / f"{page}.html"
        for other in others:
            target = resolve(page_file, links[other.html])
            assert target == (site / other.sphinx / f"{page}.html").resolve()
            assert target.is_file()


def search_terms(site, lang):
    """Return the terms of one language's search index."""
    text = (site / lang / "searchindex.js").read_text("utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return set(index["terms"]) | set(index["titleterms"])


@pytest.mark.parametrize("lang", ["zh_CN", "zh_TW"])
def test_chinese_search_index_has_chinese_words(site, lang):
    terms = search_terms(site, lang)
    chinese = {term for term in terms if re.search(r"[\u4e00-\u9fff]", term)}
    # jieba segments into words; without it, no Chinese term is indexed at all.
    assert len(chinese) > 50, sorted(chinese)[:20]
    # The glossary's "data parallelism", as jieba cuts it for search.
    words = {"zh_CN": {"数据", "并行"}, "zh_TW": {"資料", "平行"}}[lang]
    assert words <= chinese


def test_english_search_index(site):
    terms = search_terms(site, "en")
    assert {"dataparallel", "gpu"} <= terms


def test_root_index_redirects_by_browser_language(site, languages):
    html = (site / "index.html").read_text("utf-8")
    soup = BeautifulSoup(html, "html.parser")
    hrefs = {a["hreflang"]: a["href"] for a in soup.find_all("a")}
    for lang in languages:
        assert (site / hrefs[lang.html]).is_file()
    script = soup.find("script").string
    assert "zh_TW" in script and "zh_CN" in script and "navigator.languages" in script


def test_tutorial_outputs_were_executed_in_every_language(site, languages):
    for lang in languages:
        soup = read_page(site, lang.sphinx, "auto_examples/plot_01_dataparallel")
        outputs = [pre.get_text() for pre in soup.select(".sphx-glr-script-out pre")]
        joined = "\n".join(outputs)
        for n_gpus in (1, 2, 3, 8):
            assert re.search(rf"# {n_gpus} (GPUs? emulated on CPU|× .+)", joined), n_gpus
        assert "Outside: input size torch.Size([10, 5])" in joined
        # No translated text inside executed output.
        assert not re.search(r"[\u4e00-\u9fff]", joined)


def test_build_output_has_no_build_time_paths(site):
    text = (site / "en" / "auto_examples" / "plot_01_dataparallel.html").read_text("utf-8")
    assert str(Path(__file__).resolve().parent.parent) not in text


# What a warning or an error no cell printed on purpose looks like in an output:
# Python's warnings ("file.py:12: UserWarning: ..."), torch's C++ ones
# ("[W1205 ...] Warning: ..."), logging's, a traceback. A cell may print a
# warning's message on purpose (the DDP page shows broadcast_buffers').
STRAY = re.compile(r"\w+Warning: |\bWarning: |WARNING:|Traceback \(most recent call last\)")


def test_executed_outputs_have_no_stray_warnings(site):
    assert all(
        STRAY.search(text)
        for text in (
            "/x/torch/nn/parallel/distributed.py:862: FutureWarning: `broadcast_buffers` is deprecated",
            "[W1205 08:37:22.000 reducer.cpp:1400] Warning: find_unused_parameters=True was specified",
            "WARNING:root:something",
            "Traceback (most recent call last):",
        )
    )
    checked = 0
    for page in (site / "en" / "auto_examples").glob("plot_*.html"):
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        blocks = soup.select(".sphx-glr-script-out pre")
        assert blocks, f"{page.name}: no output block found (has the markup changed?)"
        for block in blocks:
            text = block.get_text()
            assert not STRAY.search(text), (page.name, text)
            checked += 1
    assert checked >= len(list((site.parent.parent / "examples").glob("plot_*.py")))


THEME_STRINGS = {
    ".toc-title": "On this page",
    ".back-to-top": "Back to top",
    ".skip-to-content": "Skip to content",
    ".related-pages a.next-page .context": "Next",
    ".related-pages a.prev-page .context": "Previous",
}


@pytest.mark.parametrize("lang", ["zh_CN", "zh_TW"])
def test_theme_interface_is_in_the_page_language(site, lang):
    catalog = read(Path(__file__).parent.parent / f"locale/{lang}/LC_MESSAGES/sphinx.po")
    soup = read_page(site, lang, "auto_examples/plot_02_dataparallel_in_depth")
    for selector, english in THEME_STRINGS.items():
        element = soup.select_one(selector)
        assert element is not None, selector
        translated = catalog.get(english).string
        assert translated and translated != english, english
        assert element.get_text(" ", strip=True) == translated, selector
    footer = soup.select_one(".bottom-of-page").get_text(" ")
    assert "Made with" not in footer and "Copyright" not in footer


def test_site_title_is_in_the_page_language(site, languages):
    for lang in languages:
        home = read_page(site, lang.sphinx, "index").h1.get_text(strip=True).rstrip("#¶")
        for page in PAGES:
            soup = read_page(site, lang.sphinx, page)
            brand = soup.select_one(".sidebar-brand-text").get_text(strip=True)
            title = soup.title.get_text()
            if lang.sphinx == "en":
                assert brand == "Data Parallelism in PyTorch"
            else:
                assert brand == home and re.search(r"[\u4e00-\u9fff]", brand)
            assert title.endswith(brand)


@pytest.mark.parametrize("lang", ["zh_CN", "zh_TW"])
def test_status_page_names_pages_by_their_translated_titles(site, lang):
    soup = read_page(site, lang, "translation-status")
    table = soup.select_one(".translation-status table")
    links = {a["href"]: a.get_text(" ", strip=True) for a in table.select("tbody td a")}
    for page in ("index", "auto_examples/plot_01_dataparallel", "translating"):
        title = copy.copy(read_page(site, lang, page).h1)
        for hidden in title.select(".headerlink, .bilingual-en"):
            hidden.decompose()
        assert links[f"{page}.html"] == title.get_text(" ", strip=True)
        assert re.search(r"[\u4e00-\u9fff]", links[f"{page}.html"])
    catalog = read(Path(__file__).parent.parent / f"locale/{lang}/LC_MESSAGES/translation-status.po")
    interface = catalog.get("The site's interface: menus, buttons and labels").string
    assert interface and interface in table.get_text()
    assert "sphinx" not in [cell.get_text(strip=True) for cell in table.select("tbody td")]


def test_each_card_shows_its_tutorials_figure_or_a_decorative_placeholder(site):
    """A tutorial's card shows its figure, described as on its page; without one,
    Sphinx-Gallery's placeholder picture, which says nothing (``alt=""``): the
    card's title is its link's name.
    """
    gallery = BeautifulSoup((site / "en/auto_examples/index.html").read_text("utf-8"), "html.parser")
    cards = {
        card.select_one("a.internal")["href"]: card for card in gallery.select(".sphx-glr-thumbcontainer")
    }
    images = site / "en" / "_images"
    for example in sorted((site.parent.parent / "examples").glob("plot_*.py")):
        page = BeautifulSoup(
            (site / "en/auto_examples" / f"{example.stem}.html").read_text("utf-8"), "html.parser"
        )
        figures = page.select("img.sphx-glr-single-img")
        thumbnail = cards[f"{example.stem}.html"].select_one("img")
        chosen = re.search(r"^# sphinx_gallery_thumbnail_number = (\d+)", example.read_text("utf-8"), re.M)
        assert (images / Path(thumbnail["src"]).name).is_file()
        assert all((images / Path(img["src"]).name).is_file() for img in figures)
        assert all(img.get("alt") for img in figures), example.name
        number = int(chosen[1]) if chosen else 1
        assert thumbnail["alt"] == (figures[number - 1]["alt"] if figures else ""), example.name


def test_every_extension_says_its_version_and_whether_it_is_parallel_safe():
    """Each extension of the site's (conf/extensions/, and the lock and the policy in
    conf/) returns from setup() a dict with "version" and both parallel flags."""
    import ast

    checked = 0
    conf = Path(__file__).parent.parent / "conf"
    for path in sorted([*(conf / "extensions").glob("*.py"), *conf.glob("*.py")]):
        tree = ast.parse(path.read_text("utf-8"))
        setup = next(
            (node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "setup"), None
        )
        if setup is None:
            continue  # a helper module, not an extension
        returned = [node.value for node in ast.walk(setup) if isinstance(node, ast.Return)]
        assert returned, f"{path.name}: setup() returns nothing"
        for value in returned:
            assert isinstance(value, ast.Dict), f"{path.name}:{value.lineno}: setup() returns no dict"
            keys = {key.value for key in value.keys if isinstance(key, ast.Constant)}
            assert {"version", "parallel_read_safe", "parallel_write_safe"} <= keys, (
                f"{path.name}:{value.lineno}"
            )
        checked += 1
    assert checked >= 20


def test_the_review_page_finds_the_pages_just_built_current(site):
    """The review's "built pages are older than the change" warning is silent right after
    a build: it compares the sources, not the build's options or recordings."""
    from catalogs.source_diff import stale_languages

    assert stale_languages([lang.sphinx for lang in LANGUAGES], site) == []
