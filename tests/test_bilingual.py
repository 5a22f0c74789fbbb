"""conf/extensions/bilingual.py on a one-page fixture project (tests/roots/bilingual)."""

import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import sphinx_build
from catalogs.po import messages, read  # conf/ is on sys.path

TESTS = Path(__file__).resolve().parent
ROOT_PROJECT = TESTS / "roots" / "bilingual"


def build(tmp_path, builder, language):
    """Build a copy of the fixture project; return the output folder."""
    src = tmp_path / "src"
    if not src.exists():
        shutil.copytree(ROOT_PROJECT, src)
    out = tmp_path / f"{builder}-{language}"
    result = sphinx_build(
        "-b",
        builder,
        "-W",
        "-q",
        "-D",
        f"language={language}",
        "-d",
        tmp_path / f"doctrees-{builder}-{language}",
        src,
        out,
    )
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def zh_tw(tmp_path_factory):
    out = build(tmp_path_factory.mktemp("bilingual"), "html", "zh_TW")
    return BeautifulSoup((out / "index.html").read_text("utf-8"), "html.parser"), out


def english_after(element):
    """Return the English copy right after *element*, or None."""
    following = element.find_next_sibling()
    if following is not None and "bilingual-en" in following.get("class", []):
        return following
    return None


def paragraph(soup, text):
    return soup.find(lambda tag: tag.name == "p" and text in tag.get_text())


def test_translated_paragraph_keeps_its_english_original(zh_tw):
    soup, _ = zh_tw
    translated = paragraph(soup, "斑馬的譯文")
    copy = english_after(translated)
    assert "translated" in translated["class"]
    assert copy["lang"] == "en" and "no-search" in copy["class"]
    assert copy.get_text().startswith("A translated paragraph about a zebra")
    assert copy.find("a")["href"] == "https://example.org"
    assert not copy.find(id=True)  # anchors stay with the translation


def test_titles_get_an_english_paragraph_after_them(zh_tw):
    soup, _ = zh_tw
    for heading, english in [("h1", "Zebra crossing"), ("h2", "Second section")]:
        copy = english_after(soup.find(heading))
        assert "bilingual-title" in copy["class"] and copy.get_text() == english


def test_untranslated_fuzzy_and_identical_paragraphs_get_no_copy(zh_tw):
    soup, _ = zh_tw
    untranslated = paragraph(soup, "An untranslated paragraph.")
    fuzzy = paragraph(soup, "whose translation is fuzzy")
    same = paragraph(soup, "Same in both languages.")
    assert "untranslated" in untranslated["class"] and english_after(untranslated) is None
    assert {"untranslated", "fuzzy"} <= set(fuzzy["class"]) and english_after(fuzzy) is None
    assert english_after(same) is None


def test_text_left_in_english_is_marked_english(zh_tw):
    """A screen reader reads it in English; the badge after it stays in the page's language."""
    soup, _ = zh_tw
    for text in ("An untranslated paragraph.", "whose translation is fuzzy"):
        original = paragraph(soup, text)
        assert original.get("lang") is None  # site.css's badge is this element's ::after
        assert [child.name for child in original.children] == ["span"]
        assert original.span["lang"] == "en" and text in original.span.get_text()
    translated = paragraph(soup, "斑馬的譯文")
    assert not translated.find(lang=True)


def test_lists_stay_compact(zh_tw):
    soup, _ = zh_tw
    body = soup.find(attrs={"role": "main"})
    items = body.find("ul").find_all("li")
    assert "simple" in body.find("ul")["class"]
    assert [english_after(li.p).get_text() for li in items] == ["First item.", "Second item."]


def test_english_copies_stay_out_of_the_search_index(zh_tw):
    _, out = zh_tw
    assert "zebra" not in (out / "searchindex.js").read_text("utf-8")


def test_english_builds_and_catalogs_are_untouched(tmp_path):
    html = build(tmp_path, "html", "en")
    assert "bilingual-en" not in (html / "index.html").read_text("utf-8")
    pot = read(build(tmp_path, "gettext", "en") / "index.pot")
    msgids = [message.id for message in messages(pot)]
    assert len(msgids) == len(set(msgids)) == 8
