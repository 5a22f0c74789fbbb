"""One table of languages drives everything: a fourth language is one new row (on a copy of
the mini site)."""

import re
import shutil
import subprocess

import pytest
from bs4 import BeautifulSoup

from conftest import outside_env, run_module
from languages import LANGUAGES, select

JAPANESE = """    Language("ja", "ja", "ja", "日本語", "Jpan", "言語を選択"),\n"""


def make(project, *args, env=None):
    result = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=env or outside_env(),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_select_reads_the_table():
    everyone = [lang.sphinx for lang in LANGUAGES]
    assert select([]) == everyone
    assert select([], translations_only=True) == everyone[1:]
    assert select(["zh_TW zh_CN"]) == ["zh_TW", "zh_CN"]
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        select(["fr"])
    with pytest.raises(ValueError, match="en is the source language"):
        select(["en"], translations_only=True)


@pytest.fixture(scope="module")
def four_languages(mini_built, tmp_path_factory):
    """The mini site with Japanese added as one row, its catalogs made and the site built."""
    project = tmp_path_factory.mktemp("ja") / "project"
    shutil.copytree(mini_built, project, symlinks=True)
    status = "---\norphan: true\n---\n\n# Status\n\n```{translation-status}\n```\n"
    (project / "docs" / "translation-status.md").write_text(status, "utf-8")  # as the site's
    table = project / "conf" / "languages.py"
    text = table.read_text("utf-8")
    end = text.rfind("]", 0, text.find("\nSOURCE = "))  # the table's closing bracket
    assert end > 0, "the table no longer ends before SOURCE; update this test"
    table.write_text(text[:end] + JAPANESE + text[end:], "utf-8")
    make(project, "update-po")
    make(project, "html")
    return project


@pytest.mark.gettext
def test_the_new_language_gets_catalogs_and_a_site(four_languages):
    project = four_languages
    english = sorted(
        p.relative_to(project / "locale" / "zh_CN") for p in (project / "locale" / "zh_CN").rglob("*.po")
    )
    japanese = sorted(
        p.relative_to(project / "locale" / "ja") for p in (project / "locale" / "ja").rglob("*.po")
    )
    assert japanese == english
    index = BeautifulSoup((project / "_build/html/ja/index.html").read_text("utf-8"), "html.parser")
    assert index.html["lang"] == "ja"
    # Nothing is translated yet: the page shows the English.
    english_index = (project / "_build/html/en/index.html").read_text("utf-8")
    title = BeautifulSoup(english_index, "html.parser").h1.get_text()
    assert index.h1.get_text() == title


@pytest.mark.gettext
def test_every_page_links_four_languages(four_languages):
    html = four_languages / "_build" / "html"
    pages = sorted((html / "ja").rglob("*.html"))
    english = sorted((html / "en").rglob("*.html"))
    assert [p.relative_to(html / "ja") for p in pages] == [p.relative_to(html / "en") for p in english]
    for lang in ("en", "zh_TW", "ja"):
        for page in sorted((html / lang).rglob("*.html")):
            soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
            alternates = {link["hreflang"] for link in soup.select('link[rel="alternate"]')}
            assert alternates == {"en", "zh-CN", "zh-TW", "ja", "x-default"}, page
            if page.name not in ("404.html", "search.html", "genindex.html"):
                switcher = soup.select("nav.language-switcher li")
                assert [li.get_text(strip=True) for li in switcher] == [
                    "English",
                    "简体中文",
                    "繁體中文",
                    "日本語",
                ], page
    root = (html / "index.html").read_text("utf-8")
    assert 'href="ja/index.html"' in root and "言語を選択" in root
    assert '["ja", "ja"]' in root  # a Japanese browser is sent to ja/


@pytest.mark.gettext
def test_stat_and_the_status_page_show_the_new_language(four_languages):
    stat = make(four_languages, "stat")
    assert re.search(r"^ja$", stat, re.MULTILINE)
    # Nothing translated but the gallery's cards, which are only references (one
    # per tutorial): make update-po copies those as they are.
    rows = {
        line.split()[0]: line.split()[1:4]
        for line in stat.split("\nja\n")[1].splitlines()
        if re.match(r"^  \S+\s+\d+\s+\d+\s+\d+\s+\d+%$", line)
    }
    tutorials = len(list((four_languages / "examples").glob("plot_*.py")))
    total = rows.pop("total")
    assert total[:2] == [str(tutorials), "0"] and int(total[2]) > 0, stat
    assert rows.pop("auto_examples/index")[0] == str(tutorials), stat
    assert rows and all(done == "0" for done, _, _ in rows.values()), stat
    status = (four_languages / "_build/html/en/translation-status.html").read_text("utf-8")
    captions = [c.get_text() for c in BeautifulSoup(status, "html.parser").select("caption")]
    assert any("日本語" in caption for caption in captions), captions


@pytest.mark.gettext
def test_read_the_docs_builds_the_new_language(four_languages, tmp_path):
    result = run_module(
        four_languages,
        "build.site",
        "readthedocs",
        READTHEDOCS="True",
        READTHEDOCS_LANGUAGE="ja",
        READTHEDOCS_VERSION="latest",
        READTHEDOCS_OUTPUT=str(tmp_path / "out"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    page = BeautifulSoup((tmp_path / "out/html/index.html").read_text("utf-8"), "html.parser")
    assert page.html["lang"] == "ja"
    links = {a["hreflang"]: a["href"] for a in page.select("nav.language-switcher a")}
    assert links["zh-TW"] == "../../zh-tw/latest/index.html"  # Read the Docs' URL layout
    assert len(page.select("nav.language-switcher li")) == 4
