"""conf/extensions/translation_notice.py on a fixture project (tests/roots/translation-notice).

The fixture's zh_TW index page has five messages: three translated, one
fuzzy, one with no translation. The notice's sentences come from the
project's real zh_TW sphinx.po, copied in, so the test also catches a
translation that loses a placeholder.
"""

import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import sphinx_build

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURE = TESTS / "roots" / "translation-notice"


def build(tmp_path, language):
    """Build a copy of the fixture (with the project's sphinx.po); return the output folder."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    messages = src / "locale" / "zh_TW" / "LC_MESSAGES"
    shutil.copy(ROOT / "locale" / "zh_TW" / "LC_MESSAGES" / "sphinx.po", messages / "sphinx.po")
    out = tmp_path / f"html-{language}"
    result = sphinx_build(
        "-b", "html", "-W", "-q", "-D", f"language={language}", "-d", tmp_path / "doctrees", src, out
    )
    assert result.returncode == 0, result.stderr
    return out


def page(out, name):
    return BeautifulSoup((out / f"{name}.html").read_text("utf-8"), "html.parser")


@pytest.fixture(scope="module")
def zh_tw(tmp_path_factory):
    return build(tmp_path_factory.mktemp("notice"), "zh_TW")


def test_partly_translated_page_says_how_much_and_links_to_status_and_guide(zh_tw):
    soup = page(zh_tw, "index")
    notice = soup.select_one(".translation-notice")
    text = " ".join(notice.get_text().split())
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    assert numbers == [3 * 100 // 5, 1, 1], text  # share translated, fuzzy, untranslated
    assert not re.search("[A-Za-z]", text), text  # all of it in the reader's language
    assert [a["href"] for a in notice.find_all("a")] == ["translation-status.html", "translating.html"]
    assert [a.get_text() for a in notice.find_all("a")] == ["翻譯狀態", "翻譯"]
    # Under the title (and its English copy), above the first paragraph; not searchable.
    assert notice.find_previous("h1") is not None
    assert "斑馬的譯文" in notice.find_next_sibling("p").get_text()
    assert "no-search" in notice["class"] and notice.get("lang") is None


def test_fully_translated_pages_have_no_notice(zh_tw):
    for name in ("translating", "translation-status"):
        assert page(zh_tw, name).select_one(".translation-notice") is None


def test_english_pages_have_no_notice(tmp_path):
    assert page(build(tmp_path, "en"), "index").select_one(".translation-notice") is None
