"""The catalog syntax check: what msgfmt -c rejects, found without GNU gettext."""

import os
import subprocess
from pathlib import Path

import pytest

from catalogs.mo_files import msgfmt_problems
from gate import catalog

ROOT = Path(__file__).resolve().parent.parent
HEADER = (
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    '"Plural-Forms: nplurals=1; plural=0;\\n"\n\n'
)
# name: (entries after the header, the line of the first problem or None, its words)
CASES = {
    "plain": ('msgid "a"\nmsgstr "b"\n', None, None),
    "continued": ('msgid ""\n"a "\n"b"\nmsgstr ""\n"c"\n', None, None),
    "obsolete": ('#~ msgid "a"\n#~ msgstr "b"\n', None, None),
    "obsolete with previous": ('#~| msgid "z"\n#~ msgid "a"\n#~ msgstr "b"\n', None, None),
    "contexts": ('msgctxt "x"\nmsgid "a"\nmsgstr "b"\n\nmsgctxt "y"\nmsgid "a"\nmsgstr "c"\n', None, None),
    "plural": ('msgid "a"\nmsgid_plural "as"\nmsgstr[0] "b"\n', None, None),
    "escapes": ('msgid "a \\"q\\" \\t \\\\"\nmsgstr "b \\"q\\" \\t"\n', None, None),
    "newline lost": ('msgid "a\\n"\nmsgstr "b"\n', 7, "both end with"),
    "placeholders kept": ('#, python-format\nmsgid "%(n)s items"\nmsgstr "%(n)s 项"\n', None, None),
    "unterminated msgid": ('msgid "a\nmsgstr "b"\n', 6, "end-of-line within string"),
    "unterminated msgstr": ('msgid "a"\nmsgstr "b\n', 7, "end-of-line within string"),
    "unknown keyword": ('msgid "a"\nmsgstring "b"\n', 7, "keyword 'msgstring' unknown"),
    "no msgstr": ('msgid "a"\n\nmsgid "c"\nmsgstr "d"\n', 6, "missing 'msgstr' section"),
    "no msgstr at the end": ('msgid "a"\n', 6, "missing 'msgstr' section"),
    "duplicate": ('msgid "a"\nmsgstr "b"\n\nmsgid "a"\nmsgstr "c"\n', 9, "duplicate"),
    "duplicate, wrapped": ('msgid ""\n"a"\nmsgstr "b"\n\nmsgid "a"\nmsgstr "c"\n', 10, "duplicate"),
    "bad escape": ('msgid "a"\nmsgstr "b \\q"\n', 7, "invalid control sequence"),
    "placeholder changed": ('#, python-format\nmsgid "%(n)s items"\nmsgstr "%(m)s 项"\n', 8, "placeholder"),
    # What Sphinx's gettext builder writes has no python-format flag: msgfmt -c
    # compares no placeholders, though Babel guesses the flag for these.
    "placeholder changed, unmarked": ('msgid "%(n)s items"\nmsgstr "%(m)s 项"\n', None, None),
    "a percent in prose": ('msgid "2% of %s calls"\nmsgstr "2% 的呼叫"\n', None, None),
    "placeholder changed, with a context": (
        '#: a.rst:1\n#, python-format\nmsgctxt "x"\nmsgid "%(n)s items"\nmsgstr "%(m)s 项"\n',
        10,
        "placeholder",
    ),
    "plural without msgstr[0]": ('msgid "a"\nmsgid_plural "as"\nmsgstr "b"\n', 8, "msgstr"),
    "quote inside": ('msgid "a"\nmsgstr "b "c" d"\n', 7, "syntax error"),
}


def write(tmp_path, body):
    path = tmp_path / "case.po"
    path.write_text(HEADER + body, "utf-8")
    return path


@pytest.mark.parametrize("name", CASES)
def test_each_case_is_judged_as_gettext_would(tmp_path, name):
    body, line, words = CASES[name]
    problems = msgfmt_problems(write(tmp_path, body).read_text("utf-8"), "zh_CN")
    if line is None:
        assert problems == []
    else:
        assert problems, f"{name}: not reported"
        assert problems[0][0] == line and words in problems[0][1], problems


@pytest.mark.gettext
@pytest.mark.parametrize("name", CASES)
def test_msgfmt_agrees(tmp_path, name):
    """Where GNU gettext is installed, msgfmt -c rejects exactly the same cases."""
    path = write(tmp_path, CASES[name][0])
    result = subprocess.run(["msgfmt", "-c", "-o", os.devnull, str(path)], capture_output=True)
    assert (result.returncode != 0) == (CASES[name][1] is not None)


def test_our_catalogs_pass():
    catalogs = sorted((ROOT / "locale").rglob("*.po"))
    assert catalogs
    assert [p for path in catalogs for p in msgfmt_problems(path.read_text("utf-8"), path.parts[-3])] == []


def test_a_compiled_catalog_in_the_repository_is_reported(tmp_path):
    """The build never uses one (it compiles every .po), but a reviewer should see it."""
    messages = tmp_path / "locale" / "zh_TW" / "LC_MESSAGES"
    messages.mkdir(parents=True)
    (messages / "index.po").write_text(HEADER + 'msgid "a"\nmsgstr "b"\n', "utf-8")
    for name in ("index.mo", "sphinx.js", "local.mo"):
        (messages / name).write_bytes(b"\0")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(
        [
            "git",
            "add",
            "-f",
            "locale/zh_TW/LC_MESSAGES/index.po",
            "locale/zh_TW/LC_MESSAGES/index.mo",
            "locale/zh_TW/LC_MESSAGES/sphinx.js",
        ],
        cwd=tmp_path,
        check=True,
    )
    found = sorted(
        (Path(p.path).name, p.check) for p in catalog.committed_compiled(tmp_path / "locale" / "zh_TW")
    )
    assert found == [("index.mo", "syntax"), ("sphinx.js", "syntax")]  # local.mo is a build's
    assert list(catalog.committed_compiled(ROOT / "locale" / "zh_TW")) == []


def test_a_single_backslash_before_a_space_says_how_to_write_it():
    """The reST escape between markup and Chinese is written \\\\  inside a .po (issue 30)."""
    from catalogs.po import line_problems

    [(line, problem)] = line_problems('msgid "a *b* c"\nmsgstr "甲\\ *乙*\\ 丙"\n')
    assert line == 2 and "invalid control sequence '\\ '" in problem
    assert "'\\\\ '" in problem  # the spelling to use
    assert line_problems('msgid "a *b* c"\nmsgstr "甲\\\\ *乙*\\\\ 丙"\n') == []
