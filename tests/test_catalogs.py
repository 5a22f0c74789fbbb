"""The one catalog reader and writer (catalogs/po.py): Babel's form, strict, with
the old English; make format-po and its check."""

import random
import shutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from catalogs.po import (  # conf/ is on sys.path
    Catalog,
    catalog_language,
    messages,
    parse,
    read,
    text,
    write,
)
from gate.checks import canonical

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted((ROOT / "locale").rglob("*.po"))
FORMAT = [sys.executable, str(ROOT / "conf" / "catalogs" / "format_po.py")]


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


def test_format_po_keeps_every_entry_comment_and_flag_and_is_idempotent(tmp_path):
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
    assert [p.check for p in canonical.check(po)] == ["canonical"]

    run = subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "formatted: " in run.stdout and "index.po" in run.stdout
    formatted = po.read_text("utf-8")
    assert list(canonical.check(po)) == []
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
    again = subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == "" and po.read_text("utf-8") == formatted


@pytest.mark.gettext
def test_format_po_undoes_what_a_po_editor_rewrapped(tmp_path):
    locale = tidy_copy(tmp_path)
    catalogs = sorted(locale.rglob("*.po"))
    before = {po: po.read_text("utf-8") for po in catalogs}
    for po in catalogs:  # what a PO editor wrapping at 50 columns would save
        subprocess.run(["msgcat", "--width=50", "-o", str(po), str(po)], check=True)
    assert all(list(canonical.check(po)) for po in catalogs if before[po].count("\n") > 30)
    check = subprocess.run(
        [*FORMAT, "--check", "--locale-dir", str(locale), "zh_CN"], capture_output=True, text=True
    )
    assert check.returncode == 1 and "would change" in check.stdout
    subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], check=True, capture_output=True)
    assert {po: po.read_text("utf-8") for po in catalogs} == before


def test_format_po_needs_no_gettext_and_leaves_an_unreadable_catalog_alone(tmp_path):
    locale = tidy_copy(tmp_path)
    po = locale / "zh_CN" / "LC_MESSAGES" / "index.po"
    broken = po.read_text("utf-8") + '\nmsgid "an unterminated string\nmsgstr ""\n'
    po.write_text(broken, "utf-8")
    line = broken.count("\n") - 1
    run = subprocess.run(
        [*FORMAT, "--locale-dir", str(locale), "zh_CN"],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent"},
    )
    assert run.returncode == 1
    assert f"index.po:{line}: error: cannot read this line" in run.stderr
    assert po.read_text("utf-8") == broken
    assert list(canonical.check(po)) == []  # the syntax check reports it


def test_the_canonical_form_of_a_canonical_catalog_is_itself():
    for po in CATALOGS:
        ours = po.read_text("utf-8")
        assert text(parse(ours, catalog_language(po)), catalog_language(po)) == ours, po


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
