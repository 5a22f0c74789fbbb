"""The one catalog reader and writer (catalogs/po.py): Babel's form, strict, with
the old English; make format-po and its check."""

import random
import shutil
import re
import subprocess
from pathlib import Path

import pytest
from catalogs.po import (  # conf/ is on sys.path
    Catalog,
    open_catalog,
    messages,
    read,
    text,
    write,
)
from catalogs.cli import main as catalog_command
from gate.catalog import canonical

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted((ROOT / "locale").rglob("*.po"))


def not_canonical(po):
    """make check's canonical problems with catalog *po*."""
    return canonical(open_catalog(po))


def format_po(capsys, locale, *options):
    """make format-po on *locale*'s zh_CN catalogs: (exit code, what it printed, what it said on stderr)."""
    code = catalog_command(["format", *options, "--locale-dir", str(locale), "zh_CN"])
    out, err = capsys.readouterr()
    return code, out, err


def msgfmt_accepts(path, check=True):
    """Whether GNU gettext's msgfmt (-c with *check*) reads the catalog at *path* without an error."""
    result = subprocess.run(
        ["msgfmt", *(["-c"] if check else []), "-o", "/dev/null", str(path)], capture_output=True, text=True
    )
    return result.returncode == 0, result.stderr


@pytest.mark.gettext
def test_every_committed_catalog_is_one_gettext_reads():
    for po in CATALOGS:
        assert msgfmt_accepts(po)[0], po


@pytest.mark.gettext
@pytest.mark.parametrize("seed", range(4))
def test_random_strings_survive_a_write_and_gettext_reads_them(tmp_path, seed):
    """Whatever a string holds, written and read back it is the same, and msgfmt agrees."""
    rng = random.Random(seed)
    pieces = [
        *"abcXY 019 .,:;!?()[]{}<>-/\\\"'`*_%$+=#|~@^&",
        *"中文模型，。、：；？！（）「」《》“”…—×→·",
        "\n",
        "\t",
        "  ",
        "``",
        "nn.DataParallel",
        "GPU",
        "%(name)s",
        "%d",
    ]

    def sentence():
        return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 90)))

    catalog = Catalog(locale="zh_CN")
    for i in range(150):
        english, translation = sentence(), sentence()
        fuzzy = rng.random() < 0.3
        catalog.add(
            english,
            translation,
            context=str(i),
            flags=["fuzzy"] if fuzzy else [],
            previous_id=[sentence()] if fuzzy else (),
        )
    po = tmp_path / "zh_CN" / "LC_MESSAGES" / "random.po"
    write(catalog, po)
    again = read(po)
    kept = {(m.context, m.id): (m.string, m.previous_id, m.fuzzy) for m in messages(again)}
    assert kept == {(m.context, m.id): (m.string, m.previous_id, m.fuzzy) for m in messages(catalog)}
    assert text(again) == po.read_text("utf-8")
    # msgfmt reads it: it may refuse only what gettext asks of a program's
    # strings (a newline that starts or ends one and not the other; with -c,
    # placeholders, header defaults), which the random strings break on purpose,
    # never the file's syntax.
    allowed = re.compile(
        r"do not both (begin|end) with '\\n'|format|header field|"
        r"number of format specifications"
    )
    _, said = msgfmt_accepts(po, check=False)
    complaints = [line for line in said.splitlines() if line.startswith(str(po))]
    assert [line for line in complaints if not allowed.search(line)] == [], said


def test_the_old_english_of_a_fuzzy_entry_is_read_and_written_whole(tmp_path):
    """Babel reads #| lines as comments and writes long ones broken: not here."""
    old = "The old English of this sentence, which was long enough to wrap " * 3 + '"q"'
    catalog = Catalog(locale="zh_TW")
    catalog.add(
        "The new English", "新的", flags=["fuzzy"], previous_id=[old], user_comments=["A translator's note"]
    )
    po = tmp_path / "zh_TW" / "LC_MESSAGES" / "page.po"
    write(catalog, po)
    written = po.read_text("utf-8")
    assert '#| msgid ""\n#| "The old English' in written
    assert all(len(line) <= 79 for line in written.splitlines() if line.startswith("#|"))
    [message] = messages(read(po))
    assert message.previous_id == [old] and message.user_comments == ["A translator's note"]


def tidy_copy(tmp_path):
    """A locale folder with the committed zh_CN catalogs."""
    locale = tmp_path / "locale"
    shutil.copytree(ROOT / "locale" / "zh_CN", locale / "zh_CN")
    return locale


MESSY_ENTRY = """
# A translator's note,  kept as written.
#. An extracted comment
#: docs/index.md:12 docs/index.md:40 docs/translating.md
#, python-format, fuzzy, my-own-flag
#| msgid "The old English of this sentence, which was long enough to wrap somewhere"
msgid "The new English of this sentence, which is long enough to wrap somewhere %(x)s"
msgstr "这句话的新英文足够长，会在某处折行，%(x)s 是占位符，翻译者把它写成了很长的一行而没有折行"

#~ msgid "An obsolete entry"
#~ msgstr "一个过时的条目"
"""


def test_format_po_keeps_every_entry_comment_and_flag_and_is_idempotent(tmp_path, capsys):
    locale = tidy_copy(tmp_path)
    po = locale / "zh_CN" / "LC_MESSAGES" / "index.po"
    original = po.read_text("utf-8")
    header_end = original.index("\n\n")
    messy = (
        original[:header_end].replace('"Language: zh_CN\\n"', '"Language: zh-Hans\\n"')
        + '\n"X-Generator: Poedit 3.4\\n"\n"PO-Revision-Date: 2026-12-01 10:00+0800\\n"'
        + original[header_end:]
        + MESSY_ENTRY
    )
    po.write_text(messy, "utf-8")
    assert len(not_canonical(po)) == 1

    code, out, err = format_po(capsys, locale)
    assert code == 0, err
    assert "formatted: " in out and "index.po" in out
    formatted = po.read_text("utf-8")
    assert not_canonical(po) == []
    assert "X-Generator" not in formatted and '"Language: zh_CN\\n"' in formatted
    assert '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"' in formatted
    for kept in (
        "# A translator's note,  kept as written.",
        "#. An extracted comment",
        "#: docs/index.md:12 docs/index.md:40 docs/translating.md\n",
        "#, fuzzy, my-own-flag, python-format",
        '#~ msgid "An obsolete entry"',
        '#| msgid "The old English of this sentence, which was long enough to wrap somewhere"',
    ):
        assert kept in formatted, kept
    # Everything but the messy entry is back exactly as it was.
    assert formatted.startswith(original.rstrip("\n"))
    assert format_po(capsys, locale)[:2] == (0, "") and po.read_text("utf-8") == formatted


@pytest.mark.gettext
def test_format_po_undoes_what_a_po_editor_rewrapped(tmp_path, capsys):
    locale = tidy_copy(tmp_path)
    catalogs = sorted(locale.rglob("*.po"))
    before = {po: po.read_text("utf-8") for po in catalogs}
    for po in catalogs:  # what a PO editor wrapping at 50 columns would save
        subprocess.run(["msgcat", "--width=50", "-o", str(po), str(po)], check=True)
    assert all(not_canonical(po) for po in catalogs if before[po].count("\n") > 30)
    code, out, _ = format_po(capsys, locale, "--check")
    assert code == 1 and "would change" in out
    assert format_po(capsys, locale)[0] == 0
    assert {po: po.read_text("utf-8") for po in catalogs} == before


def test_format_po_needs_no_gettext_and_leaves_an_unreadable_catalog_alone(tmp_path, capsys, monkeypatch):
    locale = tidy_copy(tmp_path)
    po = locale / "zh_CN" / "LC_MESSAGES" / "index.po"
    broken = po.read_text("utf-8") + '\nmsgid "an unterminated string\nmsgstr ""\n'
    po.write_text(broken, "utf-8")
    line = broken.count("\n") - 1
    monkeypatch.setenv("PATH", "/nonexistent")  # no msgcat, no msgfmt
    code, _, err = format_po(capsys, locale)
    assert code == 1
    assert f"index.po:{line}: error: cannot read this line" in err
    assert po.read_text("utf-8") == broken


def test_a_process_parses_a_catalog_once_and_each_reader_changes_its_own_copy(tmp_path):
    from catalogs.po import _parsed

    po = tmp_path / "zh_TW" / "LC_MESSAGES" / "page.po"
    po.parent.mkdir(parents=True)
    po.write_text(f'# {tmp_path}\nmsgid ""\nmsgstr ""\n\nmsgid "Data"\nmsgstr "資料"\n', "utf-8")
    parses = _parsed.cache_info().misses
    first, second = read(po), read(po)
    assert _parsed.cache_info().misses == parses + 1
    first.get("Data").string = "changed"
    assert second.get("Data").string == "資料" and read(po).get("Data").string == "資料"
    po.write_text(po.read_text("utf-8").replace("資料", "數據"), "utf-8")
    assert read(po).get("Data").string == "數據"  # the file's text is the key, not its name


def test_a_new_catalog_of_an_unversioned_project_has_no_trailing_space(tmp_path):
    """Sphinx's .pot of a project without a version reads "Project-Id-Version: NAME \\n";
    make update-po's new catalog names the project without the space after it (issue 65)."""
    from catalogs.merge import update_catalog

    name, pot = "Data Parallelism in PyTorch", tmp_path / "index.pot"
    # The header of Sphinx's message.pot template, with conf.py's project and no version.
    pot.write_text(
        f'#, fuzzy\nmsgid ""\nmsgstr ""\n"Project-Id-Version: {name} \\n"\n'
        '"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#: ../../docs/index.md:1\nmsgid "Tutorials"\nmsgstr ""\n',
        "utf-8",
    )
    po = tmp_path / "zh_CN" / "LC_MESSAGES" / "index.po"
    assert update_catalog(pot, po, "zh_CN") == "created"
    new = po.read_text("utf-8")
    assert f'"Project-Id-Version: {name}\\n"' in new
    assert update_catalog(pot, po, "zh_CN") == "unchanged"  # and it stays so
