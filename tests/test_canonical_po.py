"""The canonical catalog form: Python's wrapping equals msgcat's; make format-po and its check."""

import ctypes
import ctypes.util
import itertools
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from translation.canonical_po import canonical_text, catalog_language, read, render  # conf/ is on sys.path
from translation.checks import canonical
from translation.po_wrap import POSSIBLE, line_break_class, possible_breaks

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted((ROOT / "locale").rglob("*.po"))
FORMAT = [sys.executable, str(ROOT / "conf" / "translation" / "format_catalogs.py")]


def msgcat(path, width):
    """The catalog at *path* as GNU gettext writes it at *width*."""
    return subprocess.run(
        ["msgcat", f"--width={width}", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


@pytest.mark.gettext
@pytest.mark.parametrize("width", [79, 61, 40, 27, 20])
def test_every_committed_catalog_is_wrapped_as_msgcat_wraps_it(width):
    # Narrow widths break nearly every line of the catalogs somewhere else: a
    # break rule or a character class that differs from gettext's shows up.
    for po in CATALOGS:
        ours = render(read(po.read_text("utf-8")), page_width=width, header=False)
        assert ours == msgcat(po, width), f"{po.relative_to(ROOT)} at width {width}"


@pytest.mark.gettext
@pytest.mark.parametrize("seed", range(4))
def test_random_strings_are_wrapped_as_msgcat_wraps_them(tmp_path, seed):
    rng = random.Random(seed)
    pieces = [*"abcXY 019 .,:;!?()[]{}<>-/\\\"'`*_%$+=#|~@^&", *"中文模型，。、：；？！（）「」《》“”…—×→·",
              "\n", "\t", "  ", "``", "nn.DataParallel", "GPU", "%(name)s", "%d"]  # fmt: skip

    def text():
        return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 90)))

    def quoted(value):
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")

    entries = [
        f'{rng.choice(["", "#, fuzzy", "#, python-format", "#, no-wrap"])}\n'
        f'msgctxt "{i}"\nmsgid "{quoted(text())}"\nmsgstr "{quoted(text())}"\n'
        for i in range(150)
    ]
    po = tmp_path / "random.po"
    po.write_text('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  + "\n".join(entries), "utf-8")  # fmt: skip
    for width in (79, 33, 20):
        assert render(read(po.read_text("utf-8")), page_width=width, header=False) == (
            msgcat(po, width)), f"seed {seed}, width {width}"  # fmt: skip


def libunistring():
    """The libunistring that GNU gettext wraps lines with, or None."""
    name = ctypes.util.find_library("unistring")
    return ctypes.CDLL(name) if name else None


@pytest.mark.skipif(libunistring() is None, reason="libunistring is not installed")
def test_break_opportunities_are_libunistrings():
    lib = libunistring()

    def theirs(text):
        data = text.encode()
        marks = ctypes.create_string_buffer(len(data))
        lib.u8_possible_linebreaks(data, len(data), b"UTF-8", marks)
        offsets = itertools.accumulate((len(c.encode()) for c in text), initial=0)
        return [marks.raw[i] == 2 for i in list(offsets)[:-1]]  # 2: UC_BREAK_POSSIBLE

    def ours(text):
        return [b == POSSIBLE for b in possible_breaks([line_break_class(c) for c in text])]

    samples = sorted(set("a1 |-\"'(（)}、，）!？,.:;/$+\\%：；…中\u00a0—\u2060\u200b\u0301´“”×→·。「」`_#"))
    differ = [
        text for x, y in itertools.product(samples, repeat=2) for gap in ("", " ")
        for head in ("a", "中", "1 ") for text in [head + x + gap + y + "b"]
        if theirs(text) != ours(text)
    ]  # fmt: skip
    assert not differ, differ[:5]


def tidy_copy(tmp_path):
    """A locale folder with the committed zh_CN catalogs."""
    locale = tmp_path / "locale"
    shutil.copytree(ROOT / "locale" / "zh_CN", locale / "zh_CN")
    return locale


MESSY_ENTRY = """
# A translator's note,  kept as written.
#. An extracted comment
#: docs/index.md:12 ./docs/index.md:40 docs/translating.md
#, python-format, fuzzy, my-own-flag
#| msgid "The old English of this sentence, which was long enough to wrap somewhere"
msgid "The new English of this sentence, which is long enough to wrap somewhere %(x)s"
msgstr "这句话的新英文足够长，会在某处折行，%(x)s 是占位符，翻译者把它写成了很长的一行而没有折行"

#, fuzzy
#~| msgid "An obsolete entry's previous English"
#~ msgid "An obsolete entry"
#~ msgstr "一个过时的条目"
"""


def test_format_po_keeps_every_entry_comment_and_flag_and_is_idempotent(tmp_path):
    locale = tidy_copy(tmp_path)
    po = locale / "zh_CN" / "LC_MESSAGES" / "index.po"
    original = po.read_text("utf-8")
    header_end = original.index("\n\n")
    messy = (original[:header_end].replace('"Language: zh_CN\\n"', '"Language: zh-Hans\\n"')
             + '\n"X-Generator: Poedit 3.4\\n"\n"PO-Revision-Date: 2026-12-01 10:00+0800\\n"'
             + original[header_end:] + MESSY_ENTRY)  # fmt: skip
    po.write_text(messy, "utf-8")
    assert [p.check for p in canonical.check(po)] == ["canonical"]

    run = subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], capture_output=True,
                         text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "formatted: " in run.stdout and "index.po" in run.stdout
    formatted = po.read_text("utf-8")
    assert list(canonical.check(po)) == []
    assert "X-Generator" not in formatted and '"Language: zh_CN\\n"' in formatted
    assert '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"' in formatted
    for kept in ("# A translator's note,  kept as written.", "#. An extracted comment",
                 "#: docs/index.md:12 docs/index.md:40 docs/translating.md\n",
                 "#, fuzzy, python-format, my-own-flag",
                 '#~| msgid "An obsolete entry\'s previous English"', '#~ msgid "An obsolete entry"',
                 '#| msgid ""\n#| "The old English'):  # fmt: skip
        assert kept in formatted, kept
    # Everything but the messy entry is back exactly as update-po wrote it.
    assert formatted.startswith(original.rstrip("\n"))
    again = subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], capture_output=True,
                           text=True)  # fmt: skip
    assert again.returncode == 0 and again.stdout == "" and po.read_text("utf-8") == formatted


@pytest.mark.gettext
def test_format_po_writes_what_msgcat_writes_for_a_rewrapped_catalog(tmp_path):
    locale = tidy_copy(tmp_path)
    catalogs = sorted(locale.rglob("*.po"))
    before = {po: po.read_text("utf-8") for po in catalogs}
    for po in catalogs:  # what a PO editor wrapping at 50 columns would save
        subprocess.run(["msgcat", "--width=50", "-o", str(po), str(po)], check=True)
    assert all(list(canonical.check(po)) for po in catalogs if before[po].count("\n") > 30)
    check = subprocess.run([*FORMAT, "--check", "--locale-dir", str(locale), "zh_CN"],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 1 and "would change" in check.stdout
    subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], check=True,
                   capture_output=True)  # fmt: skip
    assert {po: po.read_text("utf-8") for po in catalogs} == before


def test_format_po_needs_no_gettext_and_leaves_an_unreadable_catalog_alone(tmp_path):
    locale = tidy_copy(tmp_path)
    po = locale / "zh_CN" / "LC_MESSAGES" / "index.po"
    broken = po.read_text("utf-8") + '\nmsgid "an unterminated string\nmsgstr ""\n'
    po.write_text(broken, "utf-8")
    line = broken.count("\n") - 1
    run = subprocess.run([*FORMAT, "--locale-dir", str(locale), "zh_CN"], capture_output=True,
                         text=True, env={"PATH": "/nonexistent"})  # fmt: skip
    assert run.returncode == 1
    assert f"index.po:{line}: error: cannot read this line" in run.stderr
    assert po.read_text("utf-8") == broken
    assert list(canonical.check(po)) == []  # the syntax check reports it


def test_the_canonical_form_of_a_canonical_catalog_is_itself():
    for po in CATALOGS:
        text = po.read_text("utf-8")
        assert canonical_text(text, catalog_language(po)) == text, po
