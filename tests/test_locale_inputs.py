"""Issue 62: eight ways in through a pull request that touches only locale/, and variants of each.

Each class is tried at the one rule that closes it, which ``make check`` and
the build both call, with variants beyond the issue's: every folder name
Python's gettext expands a language code to; other charsets and plural
expressions gettext refuses (asked of gettext itself); other normal forms,
scripts and numerals; glyph-less characters of other kinds; other control
characters in names. Then in a fixture project and the mini site, where
Sphinx and ``make`` must refuse them, naming each, and publish none.
"""

import csv
import gettext
import io
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from conftest import ROOT, outside_env, sphinx_build, translate
from languages import SOURCE, TRANSLATIONS
from site_layout import GLOSSARY
from extensions.compiled_catalogs import compile_catalogs, english_reads_none
from extensions.localized_examples import notebook_refusals
from catalogs import mo_files
from catalogs.po import header_line, misplaced, msgstr_line, printable, read, write
from gate.run_checks import main as make_check
from gate.run_checks import run_checks
from gate.words import glossary_words, glyphless, in_pdf, interface_problems, words

FIXTURE = ROOT / "tests" / "roots" / "translation-safety"
MINI_LOCALE = ROOT / "tests" / "roots" / "mini-site" / "locale"
ZEBRAS = "A plain paragraph about zebras."  # the fixture project's index.rst


def locale_copy(tmp_path):
    """The mini site's catalogs (both translations, every kind of page), to add to."""
    return Path(shutil.copytree(MINI_LOCALE, tmp_path / "locale"))


def stray_catalog(folder, msgid=ZEBRAS, msgstr="STRAY-CATALOG"):
    """Write ``folder/LC_MESSAGES/index.po`` translating *msgid* as *msgstr*; return it."""
    catalog = Catalog(locale="zh_TW")
    catalog.add(msgid, msgstr)
    path = folder / "LC_MESSAGES" / "index.po"
    write(catalog, path, "zh_TW")
    return path


# -- 1 and 4: a catalog folder gettext would read, that no check reads ------------------

# Every name Python's gettext looks under for a language of the site (zh_CN.gb2312, zh,
# en_US.ISO8859-1, en ...), and a few more a translator might try.
EXPANDED = sorted(
    {name for lang in (SOURCE.sphinx, *TRANSLATIONS) for name in gettext._expand_lang(lang)}
    - set(TRANSLATIONS)
    | {"zh_CN.UTF-8", "zh_HK", "zh_Hans", "C", "en_GB"}
)


def test_the_expansions_are_the_ones_the_issue_names():
    assert {"en", "en_US", "zh", "zh_CN.gb2312", "zh_TW.big5"} <= set(EXPANDED)


@pytest.mark.parametrize("folder", EXPANDED)
def test_no_other_folder_reaches_a_build_or_passes_the_gate(tmp_path, folder):
    locale = locale_copy(tmp_path)
    stray_catalog(locale / folder)
    assert [(path.name, why.split(":")[0]) for path, why in misplaced(locale, TRANSLATIONS)] == [
        (folder, "a folder of a language that is no translation of conf/languages.py (zh_CN, zh_TW)")
    ]
    gate = run_checks(TRANSLATIONS, {"syntax"}, locale)
    assert [(p.path, p.line) for p in gate] == [(printable(locale / folder), 1)]
    out = tmp_path / "compiled"
    found = compile_catalogs(locale, out)
    assert [where for where, _ in found["*"]] == [f"{locale / folder}:1"]
    assert sorted(p.name for p in out.iterdir()) == sorted(TRANSLATIONS)
    for lang in (SOURCE.sphinx, *TRANSLATIONS):  # what Sphinx's Locale would chain: its own only
        reached = gettext.find("index", str(out), [lang], all=True)
        assert reached == ([str(out / lang / "LC_MESSAGES" / "index.mo")] if lang in TRANSLATIONS else [])


@pytest.mark.parametrize(
    "folder, language",
    [("en", "en"), ("en_US", "en"), ("en_US.ISO8859-1", "en"), ("zh_TW.big5", "zh_TW"), ("zh", "zh_TW")],
)
def test_a_build_reads_no_other_folder_and_fails_naming_it(tmp_path, folder, language):
    """The issue's: the English build read locale/en/, where no rule is on; zh_TW read zh/."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    stray = stray_catalog(src / "locale" / folder)
    result = sphinx_build("-b", "html", "-q", "-D", f"language={language}", src, tmp_path / "out")
    assert result.returncode != 0
    assert f"{stray.parents[1]}:1: ERROR: translation refused: a folder of a language" in result.stderr
    pages = [p for p in (tmp_path / "out").rglob("*.html") if "STRAY-CATALOG" in p.read_text("utf-8")]
    assert pages == []


def test_the_english_build_reads_no_catalog():
    from types import SimpleNamespace

    config = SimpleNamespace(language=SOURCE.sphinx, locale_dirs=["/x/compiled"], catalog_sources="../locale")
    english_reads_none(None, config)
    assert config.locale_dirs == [] and config.catalog_sources == "../locale"
    translated = SimpleNamespace(language="zh_TW", locale_dirs=["/x/compiled"], catalog_sources="")
    english_reads_none(None, translated)
    assert translated.locale_dirs == ["/x/compiled"]


@pytest.mark.parametrize(
    "name, stray, why",
    [
        ("zh_CN/notes.txt", "zh_CN/notes.txt", "locale/<language>/ holds LC_MESSAGES/ only"),
        ("zh_CN/LC_MESSAGES/sphinx.js", "zh_CN/LC_MESSAGES/sphinx.js", "not a catalog (.po)"),
        (
            "zh_CN/LC_MESSAGES/other.mo",
            "zh_CN/LC_MESSAGES/other.mo",
            "not a catalog (.po)",
        ),  # no .po beside it
        (
            "zh_TW/LC_MESSAGES/auto_examples/x.txt",
            "zh_TW/LC_MESSAGES/auto_examples/x.txt",
            "not a catalog (.po)",
        ),
        ("README.md", "README.md", "not a catalog"),
        (
            "zh_TW/LC_MESSAGES/.hidden/index.po",
            "zh_TW/LC_MESSAGES/.hidden",
            "a name with characters",
        ),  # Sphinx skips it
        (".gitkeep", ".gitkeep", "a name with characters"),
    ],
)
def test_a_stray_file_is_refused_by_the_gate_and_the_build(tmp_path, name, stray, why):
    locale = locale_copy(tmp_path)
    (locale / name).parent.mkdir(parents=True, exist_ok=True)
    (locale / name).write_text('msgid "x"\nmsgstr "y"\n')
    [problem] = run_checks(TRANSLATIONS, {"syntax"}, locale)
    assert (problem.path, problem.line) == (printable(locale / stray), 1) and problem.message.startswith(why)
    found = compile_catalogs(locale, tmp_path / "compiled")
    assert [where for where, _ in found["*"]] == [f"{locale / stray}:1"]
    compiled = sorted(p.relative_to(tmp_path / "compiled") for p in (tmp_path / "compiled").rglob("*.*"))
    assert compiled == sorted(
        p.relative_to(MINI_LOCALE).with_suffix(".mo") for p in MINI_LOCALE.rglob("*.po")
    )


@pytest.mark.parametrize("linked", ["zh_TW", "zh_TW/LC_MESSAGES", ""])
def test_a_linked_language_folder_is_refused_and_entered_by_no_reader(tmp_path, linked):
    locale = locale_copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(locale / linked, elsewhere)
    (locale / linked if linked else locale).symlink_to(elsewhere)
    assert [path for path, _ in misplaced(locale, TRANSLATIONS)] == [locale / linked if linked else locale]
    found = compile_catalogs(locale, tmp_path / "compiled")
    assert [where for where, _ in found["*"]] == [f"{locale / linked if linked else locale}:1"]
    languages = ["zh_TW"] if linked else TRANSLATIONS
    assert [p for lang in languages for p in (tmp_path / "compiled" / lang).rglob("*.mo")] == []


def test_a_mo_left_beside_its_po_by_an_older_build_is_allowed_and_never_read(tmp_path):
    locale = locale_copy(tmp_path)
    po = locale / "zh_TW" / "LC_MESSAGES" / "index.po"
    po.with_suffix(".mo").write_bytes(b"\0")
    assert misplaced(locale, TRANSLATIONS) == []
    compile_catalogs(locale, tmp_path / "compiled")
    assert (tmp_path / "compiled" / "zh_TW" / "LC_MESSAGES" / "index.mo").read_bytes() != b"\0"


# -- 5 and 7: a header gettext would not load ---------------------------------------------

HEADER = (
    'msgid ""\nmsgstr ""\n"Language: zh_TW\\n"\n"MIME-Version: 1.0\\n"\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n'
    '"Plural-Forms: nplurals=1; plural=0;\\n"\n\n'
    'msgid "A plain paragraph about zebras."\nmsgstr "一段關於斑馬的文字。"\n'
)
LONG = "(n==1?0:" + "+".join(f"(n=={i})" for i in range(300)) + ")"
PLURALS = {
    "the issue's: over 1,000 characters": LONG,
    "a shift, which gettext does not know": "(n>>1)",
    "unbalanced": "((n==1)",
    "nested 200 deep": "(" * 200 + "n" + ")" * 200,
    "a power": "n**2",
    "a name other than n": "__import__('os').getpid()",
    "dividing by zero (loads, fails when counting)": "n/0",
    "modulo zero": "n%0",
}
CHARSETS = ["ascii", "latin-1", "foo", "utf-16", "UTF-8; charset=ascii", "utf-8-sig", "gb2312", "big5"]


def header_catalog(tmp_path, field, value):
    """A zh_TW catalog whose header's *field* says *value*; return its path."""
    old = {"Plural-Forms": "nplurals=1; plural=0;", "Content-Type": "text/plain; charset=UTF-8"}[field]
    po = tmp_path / "locale" / "zh_TW" / "LC_MESSAGES" / "index.po"
    po.parent.mkdir(parents=True)
    po.write_text(HEADER.replace(f"{field}: {old}", f"{field}: {value}"), "utf-8")
    return po


def refused_at_the_header(tmp_path, po, field):
    """Assert the gate and the build refuse *po* at its header's *field*, and no entry is used."""
    line = header_line(po.read_text("utf-8").split("\n"), field)
    assert line > 1
    assert [(p.line, p.check) for p in run_checks(["zh_TW"], {"syntax"}, po.parents[2])] == [(line, "syntax")]
    found = compile_catalogs(po.parents[2], tmp_path / "compiled")
    assert [where for where, _ in found["zh_TW"]] == [f"{po}:{line}"]
    with open(tmp_path / "compiled" / "zh_TW" / "LC_MESSAGES" / "index.mo", "rb") as mo:
        assert gettext.GNUTranslations(mo).gettext(ZEBRAS) == ZEBRAS  # the English shows


@pytest.mark.parametrize("expression", PLURALS.values(), ids=PLURALS.keys())
def test_a_plural_expression_pythons_gettext_refuses_is_refused_at_its_line(tmp_path, expression):
    po = header_catalog(tmp_path, "Plural-Forms", f"nplurals=1; plural={expression};")
    catalog = read_po(io.StringIO(po.read_text("utf-8")))  # Babel reads it: the old gate passed
    with pytest.raises(Exception):  # gettext itself: Sphinx drops the whole catalog, or fails
        loaded = mo_files.loaded(mo_files.mo(catalog))
        for count in range(1001):
            loaded.plural(count)
    refused_at_the_header(tmp_path, po, "Plural-Forms")


def test_a_plural_expression_gettext_evaluates_is_fine(tmp_path):
    po = header_catalog(tmp_path, "Plural-Forms", "nplurals=2; plural=(n != 1);")
    assert run_checks(["zh_TW"], {"syntax"}, po.parents[2]) == []
    assert compile_catalogs(po.parents[2], tmp_path / "compiled")["zh_TW"] == []


@pytest.mark.parametrize("charset", CHARSETS)
def test_a_charset_other_than_utf8_is_refused_at_its_line(tmp_path, charset):
    """The issue's: Babel could not write the .mo, and conf.py raised in every build."""
    po = header_catalog(tmp_path, "Content-Type", f"text/plain; charset={charset}")
    refused_at_the_header(tmp_path, po, "Content-Type")


# -- 2: words the English lacks, in any form; placeholders -----------------------------------

EMULATED = (
    "%(count)s × GPU emulated on the CPU; recorded %(date)s from commit %(commit)s with PyTorch %(torch)s."
)
FAITHFUL = "%(count)s 個 GPU（在 CPU 上模擬）；於 %(date)s 錄製（提交 %(commit)s），使用 PyTorch %(torch)s。"
CLAIMS = {
    "the issue's: full width, placeholders dropped": (
        "８ × ＮＶＩＤＩＡ Ｈ１００，PyTorch ２．１４。",
        "14 2 8 h100 nvidia",
    ),
    "mathematical bold": (FAITHFUL + "𝐇𝟏𝟎𝟎", "h100"),
    "superscript": (FAITHFUL + "×⁸", "8"),
    "circled": (FAITHFUL + "⑧", "8"),
    "Arabic-Indic digits": (FAITHFUL + "٨", "8"),
    "Devanagari digits": (FAITHFUL + "८", "8"),
    "Roman numeral": (FAITHFUL + "Ⅷ", "viii"),
    "Chinese numerals": (FAITHFUL + "共八張", "8"),
    "兩 as a count": (FAITHFUL + "共兩張", "2"),
    "a year in Chinese numerals": (FAITHFUL + "二〇二六年", "2026"),
    "hundreds in Chinese numerals": (FAITHFUL + "三百二十", "320"),
    "accounting numerals": (FAITHFUL + "共捌張", "8"),
    "accounting numerals of common characters": (FAITHFUL + "伍拾陸", "56"),
    "a Cyrillic word": (FAITHFUL + "Тесла", "тесла"),
    "lower case": (FAITHFUL + "h100", "h100"),
    "half-width katakana": (FAITHFUL + "ｶｰﾄﾞ", "カード"),
}


@pytest.mark.parametrize("translation, said", CLAIMS.values(), ids=CLAIMS.keys())
def test_an_interface_string_adds_no_word_or_number_in_any_form(translation, said):
    reasons = "; ".join(interface_problems(EMULATED, translation))
    assert f"the English does not say: {said}" in reasons


PLACEHOLDERS = {
    "one dropped": FAITHFUL.replace("%(commit)s", "某次"),
    "all dropped": "GPU（在 CPU 上模擬）。",
    "one renamed": FAITHFUL.replace("%(torch)s", "%(date)s"),
    "one twice": FAITHFUL + "%(count)s",
    "one with another conversion": FAITHFUL.replace("%(count)s", "%(count)d"),
    "a brace placeholder added": FAITHFUL + "{count}",
}


@pytest.mark.parametrize("translation", PLACEHOLDERS.values(), ids=PLACEHOLDERS.keys())
def test_a_translation_keeps_exactly_the_englishs_placeholders(translation):
    assert any("placeholders are not the English's" in r for r in interface_problems(EMULATED, translation))


def test_positional_placeholders_keep_their_order_named_ones_need_not():
    assert interface_problems("%s of %d", "%d 之 %s")  # formatted in the English's order
    assert interface_problems("%s of %d", "%s 之 %d") == []
    named = "於 %(date)s 錄製（提交 %(commit)s），共 %(count)s 個 GPU（在 CPU 上模擬），PyTorch %(torch)s。"
    assert interface_problems(EMULATED, named) == []


@pytest.mark.parametrize(
    "prose",
    [
        "下一頁",
        "最近一次重新建置失敗",
        "十分抱歉",
        "萬一出錯",
        "千萬別慌",
        "統一",
        "唯一",
        "一一列出",
        "兩者都可以",
        "第一",
        "一起",
        "一些",
        "模擬一個行程",
        "參數",
        "陸續載入",
        "收拾",
        "大陸",
        "隊伍",
    ],
)
def test_numerals_that_are_no_number_in_real_prose_are_words(prose):
    assert words(prose) == set()


def test_the_numerals_counted_are_never_false_alarms_in_the_real_interface_strings():
    """Measured: the sites' own interface translations hold none but as words (一個, 下一頁)."""
    with open(GLOSSARY, encoding="utf-8", newline="") as rows:
        glossary = list(csv.DictReader(rows))
    for lang in TRANSLATIONS:
        for message in read(ROOT / "locale" / lang / "LC_MESSAGES" / "sphinx.po"):
            if message.id and message.string:
                allowed = words(message.id) | glossary_words(message.id, glossary, lang)
                assert words(message.string) <= allowed | {"python", "jupyter", "notebook"}


def test_the_real_interface_strings_pass():
    problems = run_checks(TRANSLATIONS, {"interface"}, ROOT / "locale")
    assert [str(p) for p in problems] == []


# -- 3: the words a change may add come from its base's glossary ----------------------------


@pytest.fixture
def widened(mini_site):
    """The mini site in git, then a change that adds a glossary row and uses its words."""
    project = mini_site
    git = lambda *args: subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A", "docs", "examples", "locale", "conf", "Makefile")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    glossary = project / "locale" / "glossary.csv"
    glossary.write_text(
        glossary.read_text("utf-8") + 'process,进程,"8 × NVIDIA H100 80GB SXM, PyTorch 2.14.0",\n'
    )
    po = project / "locale" / "zh_TW" / "LC_MESSAGES" / "sphinx.po"
    msgid = next(m.id for m in read(po) if m.id.startswith("Processes on the CPU, run while"))
    translate(po, {msgid: read(po)[msgid].string + "（8 × NVIDIA H100 80GB SXM, PyTorch 2.14.0）"})
    return project, f"locale/zh_TW/LC_MESSAGES/sphinx.po:{msgstr_line(read(po)[msgid])}"


def make(project, *args):
    """Run ``make *args`` in *project*; return (exit code, what it printed)."""
    result = subprocess.run(["make", *args], cwd=project, capture_output=True, text=True, env=outside_env())
    return result.returncode, result.stdout + result.stderr


def test_a_changes_own_glossary_widens_nothing(widened):
    project, where = widened
    code, said = make(project, "check", "BASE=HEAD", "LANGUAGES=zh_TW")
    assert code != 0 and f"{where}: [interface] refused: it adds words or numbers" in said, said
    assert "80gb" in said and "nvidia" in said
    # The same words, with the glossary that allows them as the base: accepted.
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "glossary"],
        cwd=project,
        check=True,
    )
    code, said = make(project, "check", "BASE=HEAD", "LANGUAGES=zh_TW")
    assert "[interface]" not in said, said


def test_the_review_page_shows_the_glossarys_change(widened):
    project, _ = widened
    code, said = make(project, "review-diff", "BASE=HEAD", "LANGUAGES=zh_TW")
    assert code == 0, said
    page = (project / "_build" / "review" / "index.html").read_text("utf-8")
    assert "Other files under locale/" in page and "locale/glossary.csv" in page
    assert "80GB SXM" in page
    assert "locale\\/glossary\\.csv" in (project / "_build" / "review" / "summary.md").read_text("utf-8")


def test_the_review_workflows_build_takes_the_words_from_the_base(widened):
    project, where = widened
    code, said = make(project, "html", "LANGUAGES=zh_TW", "BASE=HEAD")
    assert code != 0
    assert f"{project / where}: ERROR: translation refused: it adds words or numbers" in said, said[-3000:]


# -- 6: a character no font of the PDF has ---------------------------------------------------

GLYPHLESS = {
    "the issue's hieroglyph": "𓀀",
    "the issue's emoji": "🧪",
    "an emoji of the BMP": "☃",
    "a combining mark": "\u20dd",
    "Linear B": "𐀀",
    "Tangut": "𗀀",
    "a mahjong tile": "🀄",
    "braille": "⠁",
    "a regional indicator (flag)": "\U0001f1e8",
    "mathematical bold": "𝐇",
}


@pytest.mark.parametrize("char", GLYPHLESS.values(), ids=GLYPHLESS.keys())
def test_a_character_no_pdf_font_has_is_refused_by_the_gate_and_the_build(tmp_path, char):
    assert not in_pdf(char) and f"U+{ord(char):04X}" in glyphless("A sentence.", "一句話" + char)
    locale = tmp_path / "locale"
    catalog = Catalog(locale="zh_TW")
    catalog.add("A sentence.", "一句話。" + char, [("docs/page.rst", 1)])
    catalog.add("Another one.", "另一句。", [("docs/page.rst", 2)])
    po = locale / "zh_TW" / "LC_MESSAGES" / "page.po"
    write(catalog, po)
    line = po.read_text("utf-8").split("\n").index('msgstr "一句話。' + char + '"') + 1
    assert [(p.line, p.check) for p in run_checks(["zh_TW"], {"safety"}, locale)] == [(line, "safety")]
    found = compile_catalogs(locale, tmp_path / "compiled")
    assert [where for where, _ in found["zh_TW"]] == [f"{po}:{line}"]


def test_the_pdf_can_show_every_character_of_the_real_catalogs():
    for po in sorted((ROOT / "locale").rglob("*.po")):
        text = po.read_text("utf-8")
        assert [c for c in set(text) if not in_pdf(c) and unicodedata.category(c)[0] != "C"] == [], po


# -- 8: a name that would become workflow commands in a log --------------------------------

NAMES = [
    "notes\n::error title=pwned::fake annotation\n::add-mask::secret\nx.po",  # the issue's
    "cr\r::error::cr.po",
    "ff\f::warning::f.po",
    "vt\v::notice::v.po",
    "fs\x1c::error::s.po",
    "nel\x85::error::n.po",
    "ls\u2028::error::l.po",
    "ps\u2029::error::p.po",
    "esc\x1b[2Jx.po",
    "tab\t::error::t.po",
    "::error::at-the-start.po",
    "é.po",
    "bell\a.po",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_that_is_not_plain_is_refused_and_printed_escaped(tmp_path, capsys, name):
    locale = locale_copy(tmp_path)
    (locale / "zh_CN" / "LC_MESSAGES" / name).write_text(
        (locale / "zh_CN" / "LC_MESSAGES" / "index.po").read_text("utf-8"), "utf-8"
    )
    [(path, why)] = misplaced(locale, TRANSLATIONS)
    assert path.name == name and why.startswith("a name with characters other than")
    code = make_check(["--check", "syntax", "--locale-dir", str(locale), "zh_CN"])
    said = capsys.readouterr()
    assert code == 1
    for line in (said.out + said.err).split("\n"):
        assert len(line.splitlines()) <= 1 and not line.startswith("::"), repr(line)
    assert printable(locale / "zh_CN" / "LC_MESSAGES" / name) in said.out
    found = compile_catalogs(locale, tmp_path / "compiled")
    [(where, _)] = found["*"]
    assert len(where.splitlines()) == 1 and where.isascii() and where.isprintable()
    assert not (tmp_path / "compiled" / "zh_CN" / "LC_MESSAGES" / name.replace(".po", ".mo")).exists()


def test_a_folder_name_that_is_not_plain_is_refused_once_and_not_entered(tmp_path):
    locale = locale_copy(tmp_path)
    folder = locale / "zh_TW" / "LC_MESSAGES" / "dir\n::error::inside"
    stray_catalog(folder.parent / "x")  # a plain folder: its catalog is the zh_TW's
    (folder).mkdir()
    (folder / "z.po").write_text("x")
    assert [path for path, _ in misplaced(locale, TRANSLATIONS)] == [folder]


def test_printable_escapes_every_line_break_and_control():
    for code in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0x200E, 0x202E, 0xFEFF]:
        shown = printable(f"a{chr(code)}b")
        assert shown.isascii() and shown.isprintable() and len(shown.splitlines()) == 1
    assert printable("locale/zh_CN/LC_MESSAGES/index.po") == "locale/zh_CN/LC_MESSAGES/index.po"
    assert printable("::error::x") == "./::error::x"


# -- 4's notebook: its Markdown judged in the build, on the notebook it writes ------------------


def test_the_build_gives_back_the_english_cell_where_the_notebook_would_link_elsewhere():
    english = {
        "cells": [
            {"cell_type": "markdown", "source": ["# A tutorial\n\nIt prints."]},
            {"cell_type": "code", "source": ["print(1)"]},
        ]
    }
    cases = {
        "a link": "# 教學\n\n[點這裡](https://evil.example/)。",
        "an image": "# 教學\n\n![](https://evil.example/x.png)",
        "HTML": '# 教學\n\n<meta http-equiv="refresh" content="0;url=//evil.example/">',
        "a definition another paragraph uses": "# 教學 [文件]\n\n[文件]: <//evil.example/x>",
        "a www. address, which GFM links": "# 教學\n\n見 www.evil.example。",
        "an e-mail address, which GFM links": "# 教學\n\n寫信給 a@evil.example。",
    }
    for kind, text in cases.items():
        notebook = {"cells": [{"cell_type": "markdown", "source": [text]}, english["cells"][1]]}
        refused = notebook_refusals(english, notebook)
        assert refused and notebook["cells"][0]["source"] == english["cells"][0]["source"], kind
    fine = {"cells": [{"cell_type": "markdown", "source": ["# 教學\n\n它印出。"]}, english["cells"][1]]}
    assert notebook_refusals(english, fine) == [] and fine["cells"][0]["source"] == ["# 教學\n\n它印出。"]


def test_make_html_refuses_a_notebook_link_made_of_two_messages(mini_site):
    """A link definition in one message, its [name] in another: one Markdown cell links."""
    project = mini_site
    po = project / "locale" / "zh_TW" / "LC_MESSAGES" / "auto_examples" / "plot_01_tiny.po"
    translate(
        po, {"A tiny tutorial": "一篇小教學 [文件]", "It prints one line.": "[文件]: <//evil.example/x>"}
    )
    code, said = make(project, "html", "LANGUAGES=zh_TW")
    assert code != 0
    assert f"{po}:" in said and "adds, in the tutorial's notebook (Markdown), a link to a host" in said
    assert "the notebook keeps the English cell" in said
    code, said = make(project, "check", "LANGUAGES=zh_TW")
    assert code != 0 and "[safety] adds, in the tutorial's notebook (Markdown), a link" in said
