"""The maintainer's and translator's loops tell the truth (issue 30).

One count against the current English for make stat, the status page and the
page notices; a tutorial added on a branch of a temporary clone: its new
catalogs, the gallery card, make update-po's output, make check BASE= and
the review page.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_worker_at_a_time, outside_env, translate
from translation.catalogs import is_translated, messages, read  # conf/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent


def run(cwd, *args, check=True):
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=outside_env())
    if check:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def stat_rows(project, lang):
    """{page: (translated, outdated, untranslated)} as make stat prints them for *lang*."""
    out = run(project, "make", "--no-print-directory", "stat", f"LANGUAGES={lang}").stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[4].endswith("%") and parts[1].isdigit():
            rows[parts[0]] = tuple(int(n) for n in parts[1:4])
    return rows


def test_stat_status_page_and_notice_count_alike_against_the_current_english(mini_site):
    project = mini_site
    index = project / "docs" / "index.md"
    text = index.read_text("utf-8")
    # An English edit without make update-po: a translated paragraph changes.
    edited = "so that the tests of the build\nmachinery (conf/site_build/) run it in seconds."
    assert edited in text
    text = text.replace(edited, "so that the tests of the build\nmachinery (conf/site_build/)"
                        " run it in a few seconds.")  # fmt: skip
    # A page added before make update-po, with the status table on it.
    text = text.replace("auto_examples/index\n```", "auto_examples/index\nstatus\n```")
    index.write_text(text, "utf-8")
    (project / "docs" / "status.md").write_text(
        "# Status\n\nHow far each page is translated.\n\n```{translation-status}\n```\n", "utf-8")
    run(project, sys.executable, "conf/site_build/build_site.py", "html", "zh_TW")
    rows = stat_rows(project, "zh_TW")
    assert rows["index"][1] == 1, rows  # the edited paragraph: outdated
    assert rows["status"][:2] == (0, 0) and rows["status"][2] >= 2, rows  # listed, untranslated
    # The status page: the same numbers per page.
    page = (project / "_build/html/zh_TW/status.html").read_text("utf-8")
    table = re.search(r'<section id="zh-tw|<table.*?</table>', page, re.S)
    cells = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S):
        texts = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if len(texts) == 5:
            cells.setdefault(texts[0], tuple(int(n) for n in texts[2:5]))
    assert table and cells, page[-2000:]
    by_title = {"只有一頁的網站": "index", "Status": "status"}
    for title, counts in cells.items():
        if title in by_title:
            assert counts == rows[by_title[title]], (title, counts, rows)
    assert set(by_title) <= set(cells), cells
    # The landing page's notice: the same share and counts, the paragraph badged outdated.
    landing = (project / "_build/html/zh_TW/index.html").read_text("utf-8")
    notice = re.search(r'class="[^"]*translation-notice.*?</div>', landing, re.S)[0]
    numbers = [int(n) for n in re.findall(r"\d+", re.sub(r"<[^>]+>", "", notice))]
    translated, outdated, untranslated = rows["index"]
    total = translated + outdated + untranslated
    expected = [translated * 100 // total, outdated] + ([untranslated] if untranslated else [])
    assert numbers[:len(expected)] == expected, (numbers, rows["index"])
    badged = re.search(r'<p class="([^"]*)"[^>]*>(?:<span[^>]*>)?This site has one page', landing)
    assert badged and "fuzzy" in badged[1].split(), badged


@pytest.fixture(scope="module")
def tutorial_branch(site, tmp_path_factory):
    """A clone of this checkout on a branch that adds a tutorial, after make update-po."""
    clone = tmp_path_factory.mktemp("walk") / "clone"
    run(ROOT, "git", "clone", "--quiet", str(ROOT), str(clone))
    (clone / ".venv").symlink_to(ROOT / ".venv")
    stamp = (ROOT / "requirements.txt").stat()  # the pins' mtime: make reuses .venv
    os.utime(clone / "requirements.txt", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    # The executed gallery and the last good site: only the new tutorial runs.
    with one_worker_at_a_time(sources=False):
        shutil.copytree(ROOT / "docs" / "auto_examples", clone / "docs" / "auto_examples")
        for part in ("html", "stamps"):
            shutil.copytree(ROOT / "_build" / part, clone / "_build" / part, symlinks=True)
    base = run(clone, "git", "rev-parse", "HEAD").stdout.strip()
    run(clone, "git", "switch", "--quiet", "-c", "add-a-tutorial")
    (clone / "examples" / "plot_04_tiny.py").write_text('''"""
.. _tiny-tutorial:

A tiny tutorial
===============

This page prints one line, to show how a tutorial is added.
"""

# %%
# Print it
# --------
#
# One call, one line of output.

print("a line from the new tutorial")
''', "utf-8")
    index = clone / "docs" / "index.md"
    index.write_text(index.read_text("utf-8").replace(
        "auto_examples/plot_03_distributed_data_parallel\n",
        "auto_examples/plot_03_distributed_data_parallel\nauto_examples/plot_04_tiny\n"), "utf-8")
    update = run(clone, "make", "--no-print-directory", "update-po")
    return clone, base, update


def test_update_po_fills_a_new_tutorials_shared_entries_and_guesses_nothing(tutorial_branch):
    clone, _, update = tutorial_branch
    # A short summary, not Sphinx's progress.
    assert len(update.stdout.splitlines()) < 20, update.stdout
    assert "multiple toctrees" not in update.stdout + update.stderr
    assert "created: locale/zh_TW/LC_MESSAGES/auto_examples/plot_04_tiny.po" in update.stdout
    for lang in ("zh_CN", "zh_TW"):
        new = read(clone / f"locale/{lang}/LC_MESSAGES/auto_examples/plot_04_tiny.po")
        other = {m.id.replace("plot_01_dataparallel", "plot_04_tiny"): m.string.replace(
            "plot_01_dataparallel", "plot_04_tiny") for m in messages(read(
                clone / f"locale/{lang}/LC_MESSAGES/auto_examples/plot_01_dataparallel.po"))}
        done = [m for m in messages(new) if is_translated(m)]
        assert len(done) == 4, [m.id for m in done]  # three downloads and "Go to the end"
        assert all(m.string == other[m.id] and "plot_04_tiny" in m.string for m in done)
        assert not any(m.fuzzy for m in messages(new))  # no guess from another page
        assert {m.id for m in messages(new) if not m.string} >= {"A tiny tutorial", "Print it"}
        # The gallery card: left empty, not another tutorial's link marked fuzzy.
        gallery = read(clone / f"locale/{lang}/LC_MESSAGES/auto_examples/index.po")
        card = gallery.get(":doc:`/auto_examples/plot_04_tiny`")
        assert card is not None and card.string == "" and not card.fuzzy
        # Its location names the file a translator can open.
        assert "examples/index.py" not in (clone / f"locale/{lang}/LC_MESSAGES/auto_examples/index.po").read_text("utf-8")
        assert "#: examples/GALLERY_HEADER.rst" in (clone / f"locale/{lang}/LC_MESSAGES/auto_examples/index.po").read_text("utf-8")


def test_check_base_leaves_an_untranslated_language_to_its_translators(tutorial_branch):
    clone, base, _ = tutorial_branch
    # Translate the new tutorial into zh_TW only.
    for domain, done in (("auto_examples/plot_04_tiny", {
            "A tiny tutorial": "一篇小教學",
            "This page prints one line, to show how a tutorial is added.": "這一頁印出一行，示範如何新增教學。",
            "Print it": "印出來", "One call, one line of output.": "呼叫一次，輸出一行。"}),
            ("auto_examples/index", {":doc:`/auto_examples/plot_04_tiny`": ":doc:`/auto_examples/plot_04_tiny`"}),
            ("index", {"auto_examples/plot_04_tiny": "auto_examples/plot_04_tiny"})):  # fmt: skip
        translate(clone / f"locale/zh_TW/LC_MESSAGES/{domain}.po", done)
    run(clone, "git", "add", "-A")
    run(clone, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "add")
    result = run(clone, "make", "--no-print-directory", "check", f"BASE={base}", check=False)
    said = result.stdout + result.stderr
    zh_cn = [line for line in said.splitlines() if "locale/zh_CN/" in line and "[completeness]" in line]
    assert zh_cn and all("warning:" in line for line in zh_cn), said[-3000:]
    assert result.returncode == 0, said[-3000:]
    # Before the change, the same would have been errors of the change: strict
    # make check (no BASE) still fails on them, as main requires.
    full = run(clone, "make", "--no-print-directory", "check", "LANGUAGES=zh_CN", check=False)
    assert full.returncode != 0 and "error(s) (zh_CN)" in full.stderr


def test_review_page_shows_the_english_change_and_warns_of_old_pages(tutorial_branch):
    clone, base, _ = tutorial_branch
    result = run(clone, "make", "--no-print-directory", "review-diff", f"BASE={base}")
    page = (clone / "_build/review/index.html").read_text("utf-8")
    sources = page[page.index('id="sources"'):]
    assert "<code>examples/plot_04_tiny.py</code>" in sources
    assert "A tiny tutorial" in sources and "<ins>" in sources
    assert re.search(r"<ins>(?:<span[^>]*>added: </span>)?auto_examples/plot_04_tiny</ins>", sources)
    # Its output: make update-po's extraction executed it, as make html would.
    assert re.search(r'<pre class="output">a line from the new tutorial</pre>', sources)
    # The built pages predate the change: said on the page and in the terminal.
    assert 'class="stale"' in page and "zh_TW" in page[page.index('class="stale"'):][:300]
    assert "older than" in result.stderr
