"""A volunteer's first contribution, end to end, as the translator guide tells it.

It runs on a copy of the built mini site (tests/roots/mini-site): the same
Makefile, tools and checks as the project's, on one page and one tutorial.

The English changes; `make update-po` makes the entry fuzzy in both languages;
a zh_TW volunteer fixes zh_TW only, checks zh_TW only and previews zh_TW. A
dropped backquote does not reach the site.
"""

import re
import shutil
import subprocess

import pytest
from bs4 import BeautifulSoup

from conftest import outside_env
from catalogs.po import is_translated, messages, read, write

ADDED = " This sentence was added by the translator test."
TRANSLATION = "這句是翻譯測試加上的。"


def make(project, *args):
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=project,
        env=outside_env(),
        capture_output=True,
        text=True,
    )


def plain_paragraph(lines):
    """The (first, last) line of the page's first plain paragraph of two or more lines."""
    block = []
    for number, line in enumerate([*lines, ""]):
        if line.strip() and not re.match(r"\s*(?:[#`:{<>*+|-]|\d+\.)", line):
            block.append(number)
        elif len(block) >= 2:
            return block[0], block[-1]
        else:
            block = []
    pytest.fail("docs/index.md has no plain paragraph of two or more lines for this test")


@pytest.fixture(scope="module")
def project(mini_built, tmp_path_factory):
    """A copy of the built mini site: its sources, executed gallery and published pages."""
    dest = tmp_path_factory.mktemp("loop") / "project"
    return shutil.copytree(mini_built, dest, symlinks=True)


@pytest.mark.gettext
def test_a_zh_tw_volunteer_is_not_blocked_by_zh_cn(project):
    index = project / "docs" / "index.md"
    lines = index.read_text("utf-8").splitlines()
    first, last = plain_paragraph(lines)
    english = " ".join(line.strip() for line in lines[first : last + 1]) + ADDED
    lines[last] += ADDED
    index.write_text("\n".join(lines) + "\n", "utf-8")

    result = make(project, "update-po")
    assert result.returncode == 0, result.stderr[-3000:]
    for lang in ("zh_CN", "zh_TW"):
        entry = read(project / f"locale/{lang}/LC_MESSAGES/index.po").get(english)
        assert entry is not None and entry.fuzzy, lang
    review = make(project, "review", "LANGUAGES=zh_TW")
    assert "{+This sentence was added by the translator test.+}" in review.stdout

    # The zh_TW volunteer translates the change in zh_TW only.
    path = project / "locale/zh_TW/LC_MESSAGES/index.po"
    catalog = read(path)
    entry = catalog.get(english)
    entry.string += TRANSLATION
    entry.flags.discard("fuzzy")
    entry.previous_id = []
    write(catalog, path)

    assert make(project, "check", "LANGUAGES=zh_TW").returncode == 0
    zh_cn = make(project, "check", "LANGUAGE=zh_CN")  # the old spelling works too
    assert zh_cn.returncode != 0 and "[completeness] fuzzy" in zh_cn.stdout
    assert "zh_TW" not in zh_cn.stdout
    unknown = make(project, "check", "LANGUAGES=zh_HK")
    assert unknown.returncode == 2 and "unknown language 'zh_HK'" in unknown.stderr

    result = make(project, "html", "LANGUAGES=zh_TW")
    assert result.returncode == 0, result.stderr[-3000:]
    page = (project / "_build/html/zh_TW/index.html").read_text("utf-8")
    assert TRANSLATION in BeautifulSoup(page, "html.parser").get_text()
    assert ".staging" not in result.stdout + result.stderr  # it names where the pages are
    assert "_build/html/zh_TW/index.html" in result.stdout


def test_a_dropped_backquote_is_not_published(project):
    catalog_path = project / "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_tiny.po"
    catalog = read(catalog_path)
    entry = next(m for m in messages(catalog) if is_translated(m) and "``" in m.string)
    good = catalog_path.read_text("utf-8")
    published = {p: p.read_bytes() for p in (project / "_build/html/zh_TW").rglob("*.html")}
    assert published, "the mini site's zh_TW pages are published"
    entry.string = entry.string.replace("``", "`", 1)  # the volunteer's slip
    write(catalog, catalog_path)
    try:
        result = make(project, "html", "LANGUAGES=zh_TW")
        assert result.returncode != 0
        # One slip, one message, naming the file and the line of the translation that
        # holds it (the msgstr keyword's or a continuation line's), and the cause.
        lines = catalog_path.read_text("utf-8").splitlines()
        start = next(n for n in range(entry.lineno, len(lines) + 1) if lines[n - 1].startswith("msgstr"))
        end = next((n for n in range(start, len(lines) + 1) if not lines[n - 1].strip()), len(lines) + 1)
        named = re.findall(r"plot_01_tiny\.po:(\d+): \[markup\] (.*)", result.stderr)
        assert len(named) == 1, result.stderr[-3000:]
        line, message = int(named[0][0]), named[0][1]
        assert start <= line < end and "`" in lines[line - 1], (line, start, end)
        assert message.startswith("unbalanced `` near"), message
        assert "zh_TW not published" in result.stderr
        for path, content in published.items():
            assert path.read_bytes() == content, f"{path} changed"
    finally:
        catalog_path.write_text(good, "utf-8")
