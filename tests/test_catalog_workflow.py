"""`make gettext` is deterministic and `make update-po` idempotent (on a copy)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from build.project_copy import copy_project  # conf/ is on sys.path (conftest)

ROOT = Path(__file__).resolve().parent.parent
DATE = re.compile(r'^"POT-Creation-Date: .*$', re.MULTILINE)


@pytest.fixture(scope="module")
def project_copy(site, tmp_path_factory):
    """A copy of the sources and catalogs, sharing the already executed gallery."""
    return copy_project(tmp_path_factory.mktemp("project"))


def make(project, target):
    """Run one Makefile target in *project*; fail the test on error."""
    result = subprocess.run(
        ["make", "--no-print-directory", target], cwd=project,
        capture_output=True, text=True,
    )  # fmt: skip
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
    pots = {p.relative_to(project_copy / "_build" / "gettext").with_suffix(".po")
            for p in (project_copy / "_build" / "gettext").rglob("*.pot")}
    for lang in ("zh_CN", "zh_TW"):
        catalogs = {p.relative_to(ROOT / "locale" / lang / "LC_MESSAGES")
                    for p in (ROOT / "locale" / lang / "LC_MESSAGES").rglob("*.po")}
        assert pots <= catalogs, f"{lang}: run `make update-po`"


@pytest.mark.gettext
def test_new_catalog_header_is_not_fuzzy(project_copy):
    """The .pot header is fuzzy; a new catalog must not inherit that."""
    from translation.update_catalogs import merge

    make(project_copy, "gettext")
    pot = project_copy / "_build" / "gettext" / "index.pot"
    po = project_copy / "new" / "index.po"
    assert merge(pot, po, "zh_CN") == "created"
    header = po.read_text("utf-8").split('msgid ""')[0]
    assert "#, fuzzy" not in header and "#, fuzzy" in pot.read_text("utf-8")
