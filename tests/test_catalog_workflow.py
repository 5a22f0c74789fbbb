"""`make gettext` is deterministic, `make update-po` idempotent, and sphinx-intl's
commands work beside them (on copies)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import copy_project, outside_env
from languages import TRANSLATIONS  # conf/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
DATE = re.compile(r'^"POT-Creation-Date: .*$', re.MULTILINE)


@pytest.fixture(scope="module")
def project_copy(site, tmp_path_factory):
    """A copy of the sources and catalogs, sharing the already executed gallery."""
    return copy_project(tmp_path_factory.mktemp("project"))


def make(project, target):
    """Run one Makefile target in *project*; fail the test on error."""
    result = subprocess.run(
        ["make", "--no-print-directory", target],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def snapshot(folder, pattern):
    """Map each matching file under *folder* to its text."""
    return {p.relative_to(folder): p.read_text("utf-8") for p in sorted(folder.rglob(pattern))}


def test_gettext_is_deterministic(project_copy):
    make(project_copy, "gettext")
    first = snapshot(project_copy / "_build" / "gettext", "*.pot")
    shutil.rmtree(project_copy / "_build")
    make(project_copy, "gettext")
    second = snapshot(project_copy / "_build" / "gettext", "*.pot")
    assert first.keys() == second.keys()
    for name in first:
        assert DATE.sub("", first[name]) == DATE.sub("", second[name]), name


def test_no_build_time_detail_becomes_a_msgid(project_copy):
    make(project_copy, "gettext")
    for name, text in snapshot(project_copy / "_build" / "gettext", "*.pot").items():
        msgids = "\n".join(re.findall(r'^msgid "(.*)"$', text, re.MULTILINE))
        assert "running time" not in msgids.lower(), name
        assert not re.search(r"\d+\.\d+ ?(s|sec|seconds)\b", msgids), name
        assert str(project_copy) not in text and str(ROOT) not in text, name
        assert "torch.Size" not in msgids, f"{name}: executed output became a msgid"


@pytest.mark.gettext
def test_update_po_twice_changes_nothing(project_copy):
    make(project_copy, "update-po")
    after_first = snapshot(project_copy / "locale", "*.po")
    output = make(project_copy, "update-po")
    assert snapshot(project_copy / "locale", "*.po") == after_first
    assert "updated:" not in output and "created:" not in output


def test_committed_catalogs_cover_every_page(project_copy):
    make(project_copy, "gettext")
    pots = {
        p.relative_to(project_copy / "_build" / "gettext").with_suffix(".po")
        for p in (project_copy / "_build" / "gettext").rglob("*.pot")
    }
    for lang in ("zh_CN", "zh_TW"):
        catalogs = {
            p.relative_to(ROOT / "locale" / lang / "LC_MESSAGES")
            for p in (ROOT / "locale" / lang / "LC_MESSAGES").rglob("*.po")
        }
        assert pots <= catalogs, f"{lang}: run `make update-po`"


@pytest.mark.gettext
def test_new_catalog_header_is_not_fuzzy(project_copy):
    """The .pot header is fuzzy; a new catalog must not inherit that."""
    from catalogs.merge import update_catalog

    make(project_copy, "gettext")
    pot = project_copy / "_build" / "gettext" / "index.pot"
    po = project_copy / "new" / "index.po"
    assert update_catalog(pot, po, "zh_CN") == "created"
    header = po.read_text("utf-8").split('msgid ""')[0]
    assert "#, fuzzy" not in header and "#, fuzzy" in pot.read_text("utf-8")
    fields = po.read_text("utf-8").split("\n\n")[0]
    assert re.search(r'^"Project-Id-Version: .*\S\\n"$', fields, re.MULTILINE), "no space after the name"


SPHINX_INTL = ["sphinx-intl", "-c", "conf/conf.py"]  # as docs/maintaining.md and the guide show it


def run(project, *args):
    """Run a command in *project* as a translator would; fail the test on error."""
    env = outside_env(PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(list(args), cwd=project, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


@pytest.mark.gettext
def test_sphinx_intl_works_and_make_check_names_its_rewrite(mini_site, tmp_path):
    """sphinx-intl update drops every #| line; make check says so, and the guide's way back
    (git checkout, make update-po) writes what make update-po alone writes.

    On a copy of the mini site: its Makefile, conf.py and tools are the project's.
    """
    project = mini_site
    for command in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
    ):
        run(project, "git", *command)
    index = project / "docs" / "index.md"
    # Two English edits, committed one after the other: the first leaves a
    # fuzzy entry with its old English (#|), the second changes it again.
    for old, new in (
        ("This site has one page", "This site holds one page"),
        ("run it in seconds", "build it in seconds"),
    ):
        assert old in index.read_text("utf-8")
        index.write_text(index.read_text("utf-8").replace(old, new, 1), "utf-8")
        make(project, "update-po")
        run(project, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", new)
    index.write_text(index.read_text("utf-8").replace("one tutorial", "a single tutorial", 1))
    make(project, "gettext")
    catalogs = project / "locale"
    pristine = tmp_path / "pristine"
    shutil.copytree(catalogs, pristine)
    make(project, "update-po")  # what the Makefile alone writes
    expected = snapshot(catalogs, "*.po")
    assert any("#| msgid" in text for text in expected.values())
    shutil.rmtree(catalogs)
    shutil.copytree(pristine, catalogs)

    stat = subprocess.run(
        [ROOT / ".venv" / "bin" / "sphinx-intl", "-c", "conf/conf.py", "stat"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert stat.returncode == 1  # sphinx-intl's way to say that some entries need work
    assert re.search(r"zh_TW/LC_MESSAGES/index\.po: \d+ translated, 1 fuzzy", stat.stdout)
    said = run(project, *SPHINX_INTL, "update", "-p", "_build/gettext", "-l", "zh_TW", "-l", "zh_CN")
    assert "Update:" in said
    rewritten = (catalogs / "zh_TW" / "LC_MESSAGES" / "index.po").read_text("utf-8")
    assert "#| msgid" not in rewritten  # what sphinx-intl loses
    check = subprocess.run(
        ["make", "--no-print-directory", "check", "STRICT=0"], cwd=project, capture_output=True, text=True
    )
    assert check.returncode != 0
    assert re.search(
        r"locale/zh_TW/LC_MESSAGES/index\.po:\d+: \[canonical\] rewritten by "
        r"sphinx-intl update.*git checkout the catalog, then run make update-po",
        check.stdout,
    )
    run(project, "git", "checkout", "--", "locale")
    make(project, "update-po")
    assert snapshot(catalogs, "*.po") == expected


def test_prune_po_removes_the_catalogs_of_a_page_removed_after_an_extraction(mini_site):
    """Sphinx's gettext builder never deletes a template; a removed page's must not linger.

    As a maintainer meets it: the page was extracted (its catalogs made by
    ``make update-po``), then removed, then ``make gettext`` and ``make
    prune-po`` run.
    """
    project = mini_site
    index = project / "docs" / "index.md"
    index.write_text(
        index.read_text("utf-8").replace("auto_examples/index\n", "auto_examples/index\nextra\n"), "utf-8"
    )
    (project / "docs" / "extra.md").write_text("# An extra page\n\nIt goes away.\n", "utf-8")
    make(project, "update-po")
    catalogs = [project / "locale" / lang / "LC_MESSAGES" / "extra.po" for lang in TRANSLATIONS]
    assert all(po.is_file() for po in catalogs)
    (project / "docs" / "extra.md").unlink()
    index.write_text(index.read_text("utf-8").replace("\nextra\n", "\n"), "utf-8")
    # What sphinx-intl's users run before `sphinx-intl update -p _build/gettext`.
    make(project, "gettext")
    assert not (project / "_build" / "gettext" / "extra.pot").exists()
    said = make(project, "prune-po")
    assert not any(po.exists() for po in catalogs), said
    assert "extra.po (its page is gone)" in said
    assert not (project / "_build" / "gettext" / "extra.pot").exists()
