"""A catalog with a syntax error, whichever it is: every command names it as ``file:line: error``,
exits 1 and shows no traceback (issue 65: the gallery's catalog ended `make check` in Sphinx's
crash report).

Each committed catalog is broken in turn in a copy of locale/; the catalog commands, make check
and make review-diff run in this process against the copy, the English given as templates made
from the committed catalogs (no extraction). The build runs on the mini site, for two catalogs.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from babel.messages.pofile import write_po
from conftest import mini_copy, run_module
from catalogs import cli
from catalogs.merge import STAMP, sources_digest
from catalogs.po import messages, read, shown
from build import review_page
from gate import run_checks

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted(p.relative_to(ROOT / "locale").as_posix() for p in (ROOT / "locale").rglob("*.po"))
BROKEN = 'msgid "unterminated\n'  # as the issue appended it
TRACEBACK = ("Traceback", "sphinx-doc", "Exception occurred")


def git(repo, *args):
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(a repository holding a copy of locale/, templates of its English marked current)."""
    repo = tmp_path_factory.mktemp("catalogs")
    shutil.copytree(ROOT / "locale", repo / "locale")
    pots = repo / "pot"
    for po in (repo / "locale" / "zh_CN" / "LC_MESSAGES").rglob("*.po"):
        catalog = read(po)
        for message in messages(catalog):
            message.string = ""
        pot = pots / po.relative_to(repo / "locale" / "zh_CN" / "LC_MESSAGES").with_suffix(".pot")
        pot.parent.mkdir(parents=True, exist_ok=True)
        with open(pot, "wb") as file:
            write_po(file, catalog)
    (pots / STAMP.name).write_text(sources_digest())  # what make gettext would extract now
    git(repo, "init", "-q")
    git(repo, "add", "locale")
    git(repo, "commit", "-q", "-m", "catalogs")
    return repo, pots


def commands(repo, pots, lang, out):
    """{make target: (its entry point, its arguments)} of every cheap command reading catalogs."""
    locale = ["--locale-dir", str(repo / "locale")]
    catalog_cli = {
        name: (cli.main, [command, lang, *locale, "--pot-dir", str(pots)])
        for name, command in {
            "update-po": "update",
            "prune-po": "prune",
            "format-po": "format",
            "stat": "stat",
            "review": "review",
        }.items()
    }
    return catalog_cli | {
        "seed-zh_TW": (cli.main, ["seed-zh_TW", *locale]),
        "check": (run_checks.main, [lang, *locale, "--pot-dir", str(pots), "--sources", str(ROOT / "docs")]),
        "review-diff": (
            review_page.main,
            [lang, *locale, "--base=HEAD", "--pot-dir", str(pots), "--out", str(out)]
            + ["--site", str(out / "none"), "--doctrees", str(out / "none")],
        ),
    }


@pytest.mark.parametrize("name", CATALOGS)
def test_every_command_names_a_broken_catalog(project, name, tmp_path, capsys, monkeypatch):
    repo, pots = project
    monkeypatch.chdir(repo)  # paths are shown relative to the working directory
    po = repo / "locale" / name
    with po.open("a", encoding="utf-8") as file:
        file.write(BROKEN)
    line = po.read_text("utf-8").count("\n")
    # make check's form is "file:line: [syntax] ...", the other commands' "file:line: error: ...".
    expected = re.compile(
        rf"^{re.escape(shown(po))}:{line}: (error: cannot read this line \(|\[syntax\] )"
        r"end-of-line within string",
        re.MULTILINE,
    )
    wrong = []
    try:
        for target, (main, argv) in commands(repo, pots, name.split("/")[0], tmp_path).items():
            try:
                code = main(argv)
            except BaseException as err:  # noqa: BLE001  (a traceback is what this test refuses)
                code = f"raised {err!r}"
            said = capsys.readouterr()
            output = said.out + said.err
            if code != 1 or not expected.search(output) or any(t in output for t in TRACEBACK):
                wrong.append(f"make {target}: exit {code}\n{output[-1500:]}")
    finally:
        git(repo, "checkout", "-q", "--", "locale")  # what update-po or prune-po wrote, too
    assert not wrong, "\n\n".join(wrong)


@pytest.mark.parametrize("name", ["zh_TW/LC_MESSAGES/auto_examples/index.po", "zh_CN/LC_MESSAGES/sphinx.po"])
def test_the_build_names_a_broken_catalog(name, tmp_path):
    """make html (whose check the live preview runs first too) on a copy of the mini site."""
    project = mini_copy(tmp_path / "project")
    po = project / "locale" / name
    with po.open("a", encoding="utf-8") as file:
        file.write(BROKEN)
    line = po.read_text("utf-8").count("\n")
    result = run_module(project, "build.site", "html", name.split("/")[0], timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-3000:]
    assert f"locale/{name}:{line}: [syntax] end-of-line within string" in output, output[-3000:]
    assert not any(t in output for t in TRACEBACK), output[-3000:]
