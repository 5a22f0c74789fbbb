"""A fresh machine: no target needs GNU gettext, only Python and make (on a copy)."""

import os
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT, mini_copy, outside_env, translate
from catalogs.po import read  # conf/ is on sys.path

GETTEXT_PROGRAMS = ("msgfmt", "msgmerge", "msgcat", "msgattrib", "msginit", "msgunfmt", "xgettext")


@pytest.fixture(scope="module")
def no_gettext(tmp_path_factory):
    """A mini site, and an environment whose PATH has everything but GNU gettext."""
    tmp = tmp_path_factory.mktemp("no-gettext")
    project = mini_copy(tmp / "project")
    shadow = tmp / "bin"
    shadow.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = shadow / name
            if name not in GETTEXT_PROGRAMS and not target.exists():
                target.symlink_to(os.path.join(folder, name))
    env = outside_env(PATH=str(shadow))
    probe = subprocess.run(
        ["sh", "-c", "command -v msgfmt msgmerge"], env=env, capture_output=True, text=True
    )
    assert probe.stdout == "", "the test's PATH still has GNU gettext"
    return project, env


def make(project, env, *args):
    return subprocess.run(
        ["make", "--no-print-directory", *args], cwd=project, env=env, capture_output=True, text=True
    )


def test_make_html_builds_every_language_without_gettext(no_gettext):
    project, env = no_gettext
    index = project / "docs" / "index.md"
    good = index.read_text("utf-8")
    try:
        index.write_text(good + "\nBuilt on a machine without gettext.\n")
        result = make(project, env, "html", "LANGUAGES=en zh_TW")
    finally:
        index.write_text(good, "utf-8")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    page = (project / "_build/html/zh_TW/index.html").read_text("utf-8")
    assert "Built on a machine without gettext." in page
    soup = BeautifulSoup(page, "html.parser")
    assert soup.html["lang"] == "zh-TW" and soup.h1.get_text(strip=True) != "Data parallelism in PyTorch"


def test_a_broken_catalog_is_still_refused_without_gettext(no_gettext):
    """make html, make check and make update-po name its file and line, and fail without a traceback."""
    project, env = no_gettext
    po = project / "locale" / "zh_TW" / "LC_MESSAGES" / "index.po"
    good = po.read_text("utf-8")
    try:
        po.write_text(good + '\nmsgid "An unterminated\nmsgstr ""\n', "utf-8")
        line = len(good.splitlines()) + 2
        where = f"locale/zh_TW/LC_MESSAGES/index.po:{line}:"
        for target, said in (
            ("html", "[syntax] end-of-line within string"),
            ("check", "[syntax] end-of-line within string"),
            ("update-po", "error: cannot read this line (end-of-line within string)"),
        ):
            result = make(project, env, target, "LANGUAGES=zh_TW")
            assert result.returncode == 2, (target, result.stderr[-2000:])  # make: the target failed
            assert f"{where} {said}" in result.stdout + result.stderr, (target, result.stderr[-2000:])
            assert "Traceback" not in result.stdout + result.stderr, target
    finally:
        po.write_text(good, "utf-8")


@pytest.mark.parametrize("target", ["update-po", "prune-po", "seed-zh_TW"])
def test_the_catalog_targets_need_no_gettext_either(no_gettext, target):
    """They read and write catalogs with Babel, which Sphinx and sphinx-intl use too:
    each is given work (a new sentence, an obsolete entry, an empty zh_TW entry) and does it."""
    project, env = no_gettext
    index, zh_tw = project / "docs" / "index.md", project / "locale/zh_TW/LC_MESSAGES/index.po"
    saved = {p: p.read_bytes() for p in [index, *sorted((project / "locale").rglob("*.po"))]}
    try:
        if target == "update-po":
            index.write_text(index.read_text("utf-8") + "\nA sentence the catalogs lack.\n", "utf-8")
        elif target == "prune-po":
            zh_tw.write_text(zh_tw.read_text("utf-8") + '\n#~ msgid "Gone"\n#~ msgstr "不見了"\n', "utf-8")
        else:
            translate(zh_tw, {"Tutorials": ""})
        result = make(project, env, target)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert "gettext" not in result.stderr.lower()
        entry = read(zh_tw).get("A sentence the catalogs lack.")
        if target == "update-po":
            assert entry is not None and entry.string == ""
        elif target == "prune-po":
            assert "Gone" not in zh_tw.read_text("utf-8")
        else:  # from zh_CN's 教程, through OpenCC, marked for a person to check
            seeded = read(zh_tw).get("Tutorials")
            assert seeded.string == "教程" and seeded.fuzzy, seeded
    finally:
        for path, data in saved.items():
            path.write_bytes(data)


def test_make_test_names_each_missing_tool_at_its_start_with_any_number_of_workers(no_gettext):
    """The report comes before the first result, from the controller, tool by tool.

    Java is present here and vnu.jar is not: the report names vnu.jar alone.
    """
    _, env = no_gettext
    env = dict(os.environ, PATH=env["PATH"], VNU_JAR="/nonexistent/vnu.jar")  # keeps the lock
    java = subprocess.run(["sh", "-c", "command -v java"], env=env, capture_output=True).returncode == 0
    for workers in ("0", "2"):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                f"--numprocesses={workers}",
                "-k",
                "no test has this name",
                "tests/test_languages.py",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        start = result.stdout.split("workers [" if workers != "0" else "collected", 1)[0]
        assert "missing GNU gettext (msgmerge, msgcat, msgattrib): the tests marked gettext" in start
        assert "missing the Nu Html Checker (/nonexistent/vnu.jar): the tests marked vnu" in start
        assert ("missing a Java runtime" in start) == (not java), start
