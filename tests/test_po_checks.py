"""The translation gate: make check, stat, review, seed-zh_TW, update-po, the status page.

Each check runs on tiny bad catalogs under tests/fixtures/po/bad/<check>/: every
entry marked ``# expect: <check>`` (``# expect: <check> warning``) must be
reported by that check as an error (a warning) at its translation, and nothing
else may be; the good catalogs under tests/fixtures/po/good/ must pass every
check, and those under tests/fixtures/po/false-alarms/ (one entry per kind of
false alarm seen on real catalogs, ``# kind:`` says which) every check but for
the warnings they mark. The .pot templates are made from the good zh_CN
catalogs, as *.pot files are never committed. The end-to-end tests edit a copy
of the repository.
"""

import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import opencc
import pytest
from babel.messages.pofile import write_po

from conftest import copy_project, sphinx_build
from languages import LANGUAGES
from catalogs import cli as catalogs_cli
from catalogs.glossary import load as load_glossary
from gate import catalog, english, language, parse as parsing, run_checks as gate, safety
from gate.compare import compare, role_change
from gate.findings import Message
from gate.parse import builtin_roles, parse, python_code
from gate.project import Project
from catalogs.po import Catalog, is_translated, messages, read, write

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "po"
PROBLEM = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+): \[(?P<check>[\w-]+)\] "
    r"(?:(?P<severity>warning): )?(?P<message>.*)$"
)
ENTRY_CHECKS = [arg for name in gate.ENTRY_CHECKS for arg in ("--check", name)]


def run_checks(capsys, *args):
    """Run the checks (make check) here; return (exit code, [(abs path, line, check, message, severity)])."""
    code = gate.main([str(arg) for arg in args])
    lines = capsys.readouterr().out.splitlines()
    problems = [PROBLEM.match(line) for line in lines]
    assert all(problems), lines
    return code, [
        (os.path.abspath(m["path"]), int(m["line"]), m["check"], m["message"], m["severity"] or "error")
        for m in problems
    ]


def findings(check, message):
    """The findings of *check* ("markup", "references" or "unused") on *message* (gate/compare.py)."""
    return [finding for finding in compare(message) if finding.check == check]


def entry_start(po_path, line):
    """Return the line where the entry of *po_path* that contains *line* starts."""
    starts = [m.lineno for m in messages(read(po_path))]
    return max((s for s in starts if s <= line), default=line)


def marked_entries(locale_dir):
    """Return {(abs path, line, check, severity)} for every ``# expect: check [warning]``."""
    marked = set()
    for po_path in locale_dir.rglob("*.po"):
        for message in messages(read(po_path)):
            for match in re.finditer(r"expect: ([\w-]+)( warning)?", " ".join(message.user_comments)):
                severity = "warning" if match[2] else "error"
                marked.add((str(po_path), message.lineno, match[1], severity))
    return marked


def reported_entries(problems):
    """Return {(abs path, entry line, check, severity)} of the problems found in catalogs."""
    return {
        (path, entry_start(path, line), check, severity)
        for path, line, check, _, severity in problems
        if path.endswith(".po")
    }


def msgstr_lines(po_path):
    """Return {msgid: line of its msgstr keyword} of a catalog."""
    lines = Path(po_path).read_text("utf-8").splitlines()
    found = {}
    for message in messages(read(po_path)):
        found[message.id] = next(
            n for n in range(message.lineno, len(lines) + 1) if lines[n - 1].startswith("msgstr")
        )
    return found


def template_of(catalog):
    """The .pot a catalog was merged from: its live entries, untranslated."""
    template = Catalog()
    for message in messages(catalog):
        template.add(message.id, "", message.locations, context=message.context)
    return template


def write_narrow(catalog, path):
    """Write *catalog* as a PO editor wrapping at 40 columns would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        write_po(file, catalog, width=40)


@pytest.fixture(scope="module")
def pot_dir(tmp_path_factory):
    """The English templates of the good catalogs (*.pot files are never committed)."""
    out = tmp_path_factory.mktemp("pot")
    for po_path in (FIXTURES / "good" / "zh_CN" / "LC_MESSAGES").glob("*.po"):
        write(template_of(read(po_path)), out / po_path.with_suffix(".pot").name)
    return out


def test_good_catalogs_pass_every_check(capsys, pot_dir):
    good = FIXTURES / "good"
    code, problems = run_checks(capsys, "--locale-dir", good, "--pot-dir", pot_dir, "zh_CN", "zh_TW")
    assert (code, problems) == (0, [])


@pytest.mark.parametrize("check", gate.CHECKS)
def test_bad_catalog_fails_at_the_marked_entries(capsys, pot_dir, check):
    bad = FIXTURES / "bad" / check
    langs = sorted(p.name for p in bad.iterdir())
    # The other checks' fixtures leave English words in their translations, for brevity.
    checks = [arg for name in gate.ENTRY_CHECKS if name != "english" for arg in ("--check", name)]
    code, problems = run_checks(
        capsys, "--check", check, *checks, "--locale-dir", bad, "--pot-dir", pot_dir, *langs
    )
    assert code == 1
    assert check in {p[2] for p in problems}
    assert reported_entries(problems) == marked_entries(bad)


def test_false_alarms_of_real_catalogs_are_no_errors(capsys):
    """One entry per kind of false alarm the old gate raised on real catalogs."""
    fine = FIXTURES / "false-alarms"
    code, problems = run_checks(capsys, *ENTRY_CHECKS, "--locale-dir", fine, "zh_CN", "zh_TW")
    assert code == 0
    assert reported_entries(problems) == marked_entries(fine)
    assert {p[4] for p in problems} == {"warning"}


def test_a_catalog_babel_cannot_read_or_a_url_urlsplit_rejects_is_no_crash(tmp_path, capsys):
    """One unreadable catalog is a syntax error; the others are still checked."""
    po = tmp_path / "zh_CN" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (po / "broken.po").write_text('msgid "a"\nmsgstr "b "c""\n', "utf-8")
    catalog = Catalog(locale="zh_CN")
    catalog.add(
        "Open [https://x.org](https://x.org).", "打开 [https://x.org](https://x.org)。", [("docs/page.md", 1)]
    )
    write(catalog, po / "page.po")
    code, problems = run_checks(capsys, "--check", "syntax", *ENTRY_CHECKS, "--locale-dir", tmp_path, "zh_CN")
    assert code == 1
    assert {(Path(p[0]).name, p[2]) for p in problems} == {("broken.po", "syntax")}


def test_severity_error_prints_only_the_errors(capsys):
    bad = FIXTURES / "bad" / "markup"
    _, everything = run_checks(capsys, "--check", "markup", "--locale-dir", bad, "zh_CN", "zh_TW")
    code, errors = run_checks(
        capsys, "--check", "markup", "--severity", "error", "--locale-dir", bad, "zh_CN", "zh_TW"
    )
    assert code == 1
    assert errors == [p for p in everything if p[4] == "error"] and len(errors) < len(everything)
    fine = FIXTURES / "false-alarms"
    assert run_checks(
        capsys, "--severity", "error", *ENTRY_CHECKS, "--locale-dir", fine, "zh_CN", "zh_TW"
    ) == (0, [])


def test_errors_lists_what_a_build_must_not_publish():
    bad = FIXTURES / "bad"
    found = gate.errors(["zh_CN"], bad / "unused")
    assert found and {p.severity for p in found} == {"error"}
    assert {p.check for p in found} == {"unused"}
    assert gate.errors(["zh_CN", "zh_TW"], FIXTURES / "false-alarms") == []


def test_a_cached_catalog_is_checked_again_when_it_or_what_it_is_checked_against_changes(
    tmp_path, monkeypatch
):
    locale, glossary, pots = tmp_path / "locale", tmp_path / "glossary.csv", tmp_path / "_build" / "gettext"
    shutil.copytree(FIXTURES / "good", locale)
    shutil.copy(gate.GLOSSARY, glossary)
    pots.mkdir(parents=True)  # where make gettext puts them
    (pots / "sphinx.pot").write_text('msgid ""\nmsgstr ""\n\nmsgid "Search"\nmsgstr ""\n', "utf-8")
    checked, check_catalog = [], gate.check_catalog
    monkeypatch.setattr(
        gate, "check_catalog", lambda po, *args: checked.append(po.path.name) or check_catalog(po, *args)
    )

    def run():
        checked.clear()
        return gate.run_checks(
            ["zh_CN"],
            {"markup", "terminology"},
            locale,
            pot_dir=pots,
            glossary_path=glossary,
            cache_in=tmp_path / "kept",
        )

    assert run() == [] and sorted(checked) == ["guide.po", "page.po"]
    assert run() == [] and checked == []  # nothing changed: nothing is parsed
    page = locale / "zh_CN" / "LC_MESSAGES" / "page.po"  # a translator drops a backquote and saves
    page.write_text(
        page.read_text("utf-8").replace('"用 ``nn.DataParallel`` 在', '"用 ``nn.DataParallel` 在'), "utf-8"
    )
    found = run()
    assert checked == ["page.po"] and [(Path(p.path).name, p.line) for p in found] == [("page.po", 28)]
    assert run() == found and checked == []  # cached with its problems, at their lines
    glossary.write_text(glossary.read_text("utf-8") + "made-up term,造的词,造的詞,\n", "utf-8")
    assert run() == found and sorted(checked) == ["guide.po", "page.po"]
    (pots / "sphinx.pot").write_text('msgid ""\nmsgstr ""\n\nmsgid "Hide"\nmsgstr ""\n', "utf-8")
    assert run() == found and sorted(checked) == ["guide.po", "page.po"]  # the extracted English


def test_out_of_sync_names_the_english_source_of_a_missing_entry(capsys, pot_dir):
    bad = FIXTURES / "bad" / "out-of-sync"
    _, problems = run_checks(
        capsys, "--check", "out-of-sync", "--locale-dir", bad, "--pot-dir", pot_dir, "zh_CN"
    )
    sources = {
        (Path(path).name, line, message) for path, line, _, message, _ in problems if not path.endswith(".po")
    }
    po = bad / "zh_CN" / "LC_MESSAGES"
    assert sources == {
        (
            "page.rst",
            39,
            f"English missing from {os.path.relpath(po / 'page.po')}: "
            "'Imports and parameters'; run make update-po",
        ),
        ("guide.md", 1, f"this page has no catalog {os.path.relpath(po / 'guide.po')}; run make update-po"),
    }


def test_the_checks_sphinx_changes_no_other_parse_and_no_other_log():
    """make check's Sphinx (parsing.sphinx_paragraph) keeps its directives, roles and logging
    to itself: the stand-in parse and another Sphinx application's warnings are as before."""
    import logging
    import logging.handlers

    from docutils.parsers.rst import directives, roles

    before = set(directives._directives), set(roles._roles), logging.getLogger("sphinx").handlers[:]
    app, _, (own_directives, _) = parsing._sphinx.__wrapped__()  # a new one, whatever is cached
    assert {"versionadded", "toctree"} <= set(own_directives)
    after = set(directives._directives), set(roles._roles), logging.getLogger("sphinx").handlers[:]
    assert after == before
    code = ".. versionadded:: 2.0\n\n   x = 1"
    assert parsing.sphinx_paragraph("见 :download:`文件 <a.py>`。", "rst") is not None
    parsing.sphinx_paragraph(code, "rst")  # Sphinx's directive, with its environment
    document = parsing.rst_document(code)  # docutils alone: no such directive
    assert "Unknown directive type" in document.astext()
    # Sphinx's warnings on a translation reach the check, and no other application's log.
    other = logging.handlers.BufferingHandler(capacity=100)
    logging.getLogger("sphinx").addHandler(other)
    try:
        said = parsing.inconsistent_references("See :ref:`a`.", "见 :ref:`b`。", "rst")
    finally:
        logging.getLogger("sphinx").removeHandler(other)
    assert [s.split(".")[0] for s in said] == ["inconsistent term references in translated message"]
    assert other.buffer == []


def test_the_checks_sphinx_leaves_no_folder_behind(tmp_path):
    """Not even from a process that leaves by os._exit, as the live preview's forked builds do."""
    probe = (
        "import os, sys; sys.path[:0] = sys.argv[1:]; from gate import parse as parsing; "
        "assert parsing.sphinx_paragraph('见 :ref:`x`。', 'rst') is not None; os._exit(0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(ROOT / "conf")],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_markup_names_the_problem_at_the_translation_line(capsys):
    bad = FIXTURES / "bad" / "markup"
    po_path = bad / "zh_CN" / "LC_MESSAGES" / "page.po"
    _, problems = run_checks(capsys, "--check", "markup", "--locale-dir", bad, "zh_CN")
    found = {(line, message) for _, line, _, message, _ in problems}
    at = msgstr_lines(po_path)
    glued = "Wrap the model in ``nn.DataParallel``."
    assert (
        at[glued],
        "unbalanced `` near '用 ``nn.Dat': put a space or \"\\ \" between inline "
        "markup and the text around it",
    ) in found
    assert at[glued] > next(m.lineno for m in messages(read(po_path)) if m.id == glued)
    changed = 'Use ``torch.device("cuda:0")`` for the first GPU.'
    assert (
        at[changed],
        'changes ``torch.device("cuda:0")`` to ``torch.device("cuda：0")``: copy inline code exactly',
    ) in found


def test_a_long_translation_is_reported_at_its_own_line(tmp_path, capsys):
    po_path = tmp_path / "zh_CN" / "LC_MESSAGES" / "page.po"
    po_path.parent.mkdir(parents=True)
    catalog = Catalog(locale="zh_CN")
    catalog.add(
        "The dataset holds many vectors; the loader shuffles them into batches of "
        "``batch_size`` rows each, and each batch is split.",
        "数据集包含许多向量；加载器把它们打乱，分成每批 ``batch_size``行的批次，每个批次都会被切分。",
        [("../../docs/page.rst", 1)],
    )
    write_narrow(catalog, po_path)
    _, problems = run_checks(capsys, "--check", "markup", "--locale-dir", tmp_path, "zh_CN")
    lines = po_path.read_text("utf-8").splitlines()
    [(_, line, _, message, _)] = problems
    assert "batch_size" in lines[line - 1] and not lines[line - 1].startswith("msgstr")


@pytest.mark.parametrize("slip", ["`nn.DataParallel``", "``nn.DataParallel`"])
def test_a_dropped_backquote_is_one_unbalanced_literal_at_its_line(tmp_path, capsys, slip):
    po_path = tmp_path / "zh_TW" / "LC_MESSAGES" / "page.po"
    po_path.parent.mkdir(parents=True)
    catalog = Catalog(locale="zh_TW")
    for msgid, msgstr in [
        (
            "Wrap the model in ``nn.DataParallel`` and run it; ``device_ids`` picks the GPUs.",
            f"先把模型包進 {slip} 再執行它；``device_ids`` 決定要用哪些 GPU。",
        ),
        (
            "Write ``code`` between two ``: a lone `` shows as it is.",  # quoted on purpose
            "在兩個 `` 之間寫 ``code``：落單的 `` 會原樣顯示。",
        ),
    ]:
        catalog.add(msgid, msgstr, [("page.rst", None)])
    write_narrow(catalog, po_path)
    code, problems = run_checks(capsys, "--check", "markup", "--locale-dir", tmp_path, "zh_TW")
    lines = po_path.read_text("utf-8").splitlines()
    [(path, line, _, message, severity)] = problems
    assert (code, path, severity) == (1, str(po_path), "error")
    assert message.startswith("unbalanced `` near") and "nn.Dat" in message, message
    start = msgstr_lines(po_path)[messages(catalog)[0].id]
    assert start <= line < start + 4 and slip[:6] in lines[line - 1], (line, lines)


def test_script_mix_names_each_character_and_its_replacement(capsys):
    bad = FIXTURES / "bad" / "script-mix"
    _, problems = run_checks(capsys, "--check", "script-mix", "--locale-dir", bad, "zh_TW")
    assert "Simplified characters in zh_TW: 个→個, 会→會" in {p[3] for p in problems}


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("zh_TW", "台灣在這裡，批准、旅遊、游泳、公里、裏面"),
        ("zh_TW", "只會執行一個；裡面包含；發布；干擾；二進制；里程表；說明了；滑鼠游標；分布"),
        ("zh_CN", "著名的代码在这里，台湾、里面，藉由插件"),
    ],
)
def test_script_mix_accepts_legitimate_usage(lang, text):
    assert language.other_script(text, lang) == []


class _Glossary:
    """A stand-in for the Project the terminology check reads its glossary from."""

    roles = frozenset()
    glossary = load_glossary(ROOT / "locale" / "glossary.csv")


class _Sphinx:
    """A stand-in for a Project that knows the roles of docutils and Sphinx, and no targets."""

    roles = builtin_roles()

    @staticmethod
    def resolves(*args):
        return None  # nobody can tell here


@pytest.mark.parametrize(
    ("english", "translation", "problem"),
    [
        ("Data parallelism in PyTorch", "PyTorch 中的数据并行", False),
        ("It splits the tensors across the devices and GPUs.", "它把张量分到设备和 GPU 上。", False),
        ("The DataLoader shuffles the dataset.", "DataLoader 会打乱数据集。", False),
        ("``data_size`` is 100.", "``data_size`` 是 100。", False),
        ("Choosing a device", "选择装置", True),
        ("The batches are split.", "这些批量被切分。", True),
        # A placeholder named like a term stands for a value: only the word is a term.
        ("%(count)s × process with %(backend)s", "%(count)s 个进程，以 %(backend)s 通信", False),
        ("The backend of %(count)s processes", "%(count)s 个进程的通信方式", True),
    ],
)
def test_terminology_matches_whole_words_and_plurals(english, translation, problem):
    syntax = "text" if "%(" in english else "rst"  # interface strings (sphinx.po) are text
    found = list(language.check_terms(Message(english, translation, "zh_CN", syntax, _Glossary())))
    assert bool(found) == problem, found


# -- what a translation becomes, not how it is typed (gate/compare.py, gate/safety.py) --

# (English, translation, syntax, the checks that must give an error, the checks that must warn):
# pairs written for these tests, one per kind the other projects' catalogs showed.
BECOMES = [
    # a line break the parse keeps in one paragraph, or before the "::" of a literal block
    ("Install it like this::", "像這樣安裝：\n\n::", "rst", set(), set()),
    (
        "A :class:`dict` maps keys. Keys are unique.",
        "一个 :class:`dict` 映射键。\n键是唯一的。",
        "rst",
        set(),
        set(),
    ),
    ("Use the power operator.", "使用 \\*\\* 运算符。", "rst", set(), set()),  # escaped: meant as text
    ("Rules with a bar are sums.", "含有“ | ”的规则是和。", "rst", set(), set()),  # quoted: meant as text
    (
        "Check :const:`sys.maxsize` first.",
        "先檢查 :py:data:`sys.maxsize`。",
        "rst",
        set(),
        set(),
    ),  # no data: link
    ("The :func:`!old_name` function is gone.", "函数 ``old_name`` 已移除。", "rst", set(), set()),
    (
        "Read `the guide <https://www.example.org/guide/>`__.",
        "阅读 `指南 <https://example.org/guide>`__。",
        "rst",
        set(),
        set(),
    ),
    # nobody here can tell whether the project defines it, where any role finds it
    (":meth:`pkg.Item.close` frees it.", ":func:`pkg.Item.close` 會釋放它。", "rst", set(), {"references"}),
    # the English's own list mark, kept: a list, and Sphinx shows the English
    ("(b) The workers share nothing.", "(b) 工作进程之间不共享任何东西。", "rst", {"unused"}, set()),
    ("Q. Can a rank skip a step?", "Q. 某个 rank 能跳过一步吗？", "rst", {"unused"}, set()),
    ("(b) The workers share nothing.", "\\(b) 工作进程之间不共享任何东西。", "rst", set(), set()),
    ("Call ``barrier`` before saving.", "保存前调用 barrier。", "rst", {"markup"}, set()),  # code lost
    (
        "Compare with ``is not`` here; it is not ``==``.",
        "这里用 ``not is`` 比较；它不是 ``==``。",
        "rst",
        {"markup"},
        set(),
    ),
    (
        "Pass it a string.",
        "傳給它一個 :class:`str`。",
        "rst",
        {"references"},
        set(),
    ),  # Sphinx warns: -W fails
    ("Follow :pep:`20` here.", "這裡遵循 PEP 20。", "rst", {"markup"}, set()),  # its link lost
    ("It is *very* fast.", "它非常快。", "rst", set(), {"markup"}),
    ("It is *very* fast.", "它\\*非常\\*快。", "rst", {"markup"}, set()),  # escaped: the emphasis shown raw
    ("Write ``%%`` for one ``%``::", "用 ``%%`` 表示一個 `%`：\n\n::", "rst", {"markup"}, set()),  # italics
]


@pytest.mark.parametrize(("english", "translation", "syntax", "errors", "warnings"), BECOMES)
def test_a_translation_is_judged_by_what_it_becomes(english, translation, syntax, errors, warnings):
    message = Message(english, translation, "zh_CN", syntax, _Sphinx)
    found = [*compare(message), *(replace(f, check="safety") for f in safety.check(message))]
    assert {f.check for f in found if f.severity == "error"} == errors, found
    assert {f.check for f in found if f.severity == "warning"} == warnings, found


# -- what Sphinx itself does with a changed role or a numbered start --------------

# (English role, target, the translation's role): external objects of another project.
ROLE_CASES = [
    ("exc", "ext.Err", "class"),
    ("class", "ext.Thing", "obj"),
    ("class", "ext.Thing", "exc"),
    ("func", "ext.f", "obj"),
    ("func", "ext.f", "meth"),
    ("meth", "ext.Box.run", "func"),
    ("attr", "ext.Box.size", "meth"),
    ("data", "ext.C", "const"),
    ("data", "ext.C", "attr"),
    # :const: names no object type: only a full name defined here resolves, whatever the role.
    ("const", "main.LIMIT", "attr"),
    ("const", "main.LIMIT", "data"),
    ("const", "main.LIMIT", "mod"),
    ("const", "main.LIMIT", "ref"),
]
NUMBERED = [("Open the file.", "1. 打开文件。"), ("Close the file.", "(a) 关闭文件。")]


def test_role_changes_and_numbered_starts_are_judged_as_sphinx_builds_them(tmp_path):
    """A role change the check calls an error does not link; one it accepts does.

    Built with Sphinx and intersphinx against a second project's inventory, so that
    Sphinx looks the targets up by their object types (compare.role_change), and a
    paragraph translated with a numbered start shows the English (compare.structure).
    """

    def build(src, *options):
        sphinx_build("-q", "-b", "html", *options, src, src / "_build").check_returncode()
        return (src / "_build" / "index.html").read_text("utf-8")

    ext, main = tmp_path / "ext", tmp_path / "main"
    ext.mkdir()
    (ext / "conf.py").write_text("project = 'ext'\n")
    (ext / "index.rst").write_text(
        "Ext\n===\n\n.. py:module:: ext\n\n.. py:class:: Thing\n\n.. py:exception:: Err\n\n"
        ".. py:function:: f()\n\n.. py:data:: C\n\n.. py:class:: Box\n\n"
        "   .. py:method:: run()\n   .. py:attribute:: size\n"
    )
    build(ext)
    po = main / "locale" / "zh_CN" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (main / "conf.py").write_text(
        "extensions = ['sphinx.ext.intersphinx']\nlocale_dirs = ['locale']\n"
        f"intersphinx_mapping = {{'ext': ('https://ext.example/', "
        f"{str(ext / '_build' / 'objects.inv')!r})}}\n"
    )
    catalog = Catalog(locale="zh_CN")
    paragraphs = []
    for number, (old, target, new) in enumerate(ROLE_CASES):
        msgid = f"Case {number}: :{old}:`{target}`."
        paragraphs.append(msgid)
        catalog.add(msgid, f"例{number}：:{new}:`{target}`。")
    for msgid, msgstr in NUMBERED:
        paragraphs.append(msgid)
        catalog.add(msgid, msgstr)
    write(catalog, po / "index.po")
    (main / "index.rst").write_text(
        "Main\n====\n\n" + "\n\n".join(paragraphs) + "\n\n.. py:data:: main.LIMIT\n"
    )
    html = build(main, "-D", "language=zh_CN")
    shown = re.findall(r"<p>(.*?)</p>", html, re.S)
    for number, (old, target, new) in enumerate(ROLE_CASES):
        [paragraph] = [p for p in shown if f"例{number}：" in p]
        linked = "https://ext.example/" in paragraph or 'href="#main.LIMIT"' in paragraph
        finding = role_change(old, new, target)
        assert linked == (finding is None or finding.severity == "warning"), (old, new, finding)
    for msgid, msgstr in NUMBERED:
        assert f"<p>{msgid}</p>" in html  # Sphinx shows the English
        message = Message(msgid, msgstr, "zh_CN", "rst", _Glossary())
        assert [f.severity for f in findings("unused", message)] == ["error"]


def test_a_misspelt_myst_role_is_one_finding_in_myst_notation():
    """MyST both reports an unknown role in the document and logs it: the check says it once."""
    message = Message("Use {guilabel}`Save` now.", "现在用 {guilable}`保存`。", "zh_CN", "myst", _Sphinx)
    assert [(f.severity, f.message) for f in findings("markup", message)] == [
        ("error", "unknown role {guilable} (a typo or a translated role name?)")
    ]


def test_a_myst_translation_sphinx_drops_is_named_by_its_own_mark(tmp_path):
    """unused reads Sphinx's MyST parse, and names MyST's mark, not reST's: a quote shows the
    English on the built page; a code block and an HTML block show as the translation's
    text, without markup (Locale takes them for literal blocks), the HTML's tags as text."""
    cases = {  # English: (translation, what the page shows, severity, what the check must name)
        "Quote it here.": ("> 在这里引用。", "<p>Quote it here.</p>", "error", 'starts with ">"'),
        "Indent it here.": ("    在这里缩进。", "<p>在这里缩进。\n</p>", "warning", "four spaces"),
        "Wrap it here.": (
            "<div>在这里包装。</div>",
            "<p>&lt;div&gt;在这里包装。&lt;/div&gt;</p>",
            "error",
            "HTML",
        ),
    }
    po = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (tmp_path / "conf.py").write_text("extensions = ['myst_parser']\nlocale_dirs = ['locale']\n")
    (tmp_path / "index.md").write_text("# Main\n\n" + "\n\n".join(cases) + "\n")
    catalog = Catalog(locale="zh_CN")
    for msgid, (msgstr, *_) in cases.items():
        catalog.add(msgid, msgstr)
    write(catalog, po / "index.po")
    sphinx_build("-q", "-b", "html", "-D", "language=zh_CN", tmp_path, tmp_path / "_build").check_returncode()
    html = (tmp_path / "_build" / "index.html").read_text("utf-8")
    for msgid, (msgstr, shown, severity, named) in cases.items():
        assert shown in html
        [finding] = findings("unused", Message(msgid, msgstr, "zh_CN", "myst", _Glossary()))
        assert finding.severity == severity and named in finding.message, finding


@pytest.mark.parametrize(
    ("text", "is_code"),
    [
        (">>> x = 1", True),
        ("for data in loader:\n    print(data.size())", True),
        ("Results", False),
        ("Not found", False),
        ("Read the tutorials in order.", False),
        ("Platform: Linux", False),
        ("import path", False),
        ("Retry (optional)", False),
        ("pip install torch\ntorchrun train.py", False),
    ],
)
def test_code_entries_are_recognised(text, is_code):
    assert (python_code(text) is not None) == is_code


def test_strict_zero_reports_unfinished_entries_without_failing(capsys):
    bad = FIXTURES / "bad" / "completeness"
    strict, problems = run_checks(capsys, "--locale-dir", bad, "--check", "completeness", "zh_CN")
    lenient, reported = run_checks(
        capsys, "--locale-dir", bad, "--check", "completeness", "--strict=0", "zh_CN"
    )
    assert (strict, lenient) == (1, 0)
    assert [p[:4] for p in reported] == [p[:4] for p in problems] and len(problems) == 2
    assert {p[4] for p in reported} == {"warning"}


# -- which syntax, which targets: without #: lines -------------------------------


def strip_locations(locale_dir):
    """Delete every ``#:`` line of the catalogs under *locale_dir*."""
    for po_path in locale_dir.rglob("*.po"):
        text = po_path.read_text("utf-8")
        po_path.write_text(
            "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#:")), "utf-8"
        )


def by_entry(problems):
    """Return the problems keyed by their entry's msgid instead of their line."""
    found = set()
    for path, line, check, message, severity in problems:
        msgid = (
            next((m.id for m in messages(read(path)) if m.lineno == entry_start(path, line)), None)
            if path.endswith(".po")
            else None
        )
        found.add((os.path.relpath(path), msgid, check, message, severity))
    return found


def test_fixtures_give_the_same_findings_without_location_comments(tmp_path, capsys):
    """The page's syntax comes from the sources (page.rst, guide.md), not from #: lines."""
    sources = tmp_path / "docs"
    sources.mkdir()
    (sources / "page.rst").write_text("Page\n====\n")
    (sources / "guide.md").write_text("(translating)=\n# Guide\n")
    for check in ("markup", "references", "unused"):
        copy = tmp_path / check
        shutil.copytree(FIXTURES / "bad" / check, copy)
        langs = sorted(p.name for p in copy.iterdir())
        _, with_lines = run_checks(capsys, *ENTRY_CHECKS, "--locale-dir", copy, *langs)
        expected = by_entry(with_lines)
        strip_locations(copy)
        assert "#:" not in "".join(p.read_text("utf-8") for p in copy.rglob("*.po"))
        _, without = run_checks(capsys, *ENTRY_CHECKS, "--locale-dir", copy, "--sources", sources, *langs)
        assert without and by_entry(without) == expected


def test_project_catalogs_give_the_same_findings_without_location_comments(tmp_path):
    """Our catalogs with every #: line removed (as Transifex exports them): nothing changes."""
    locale = tmp_path / "locale"
    shutil.copytree(ROOT / "locale", locale)
    for lang in ("zh_CN", "zh_TW"):
        po_path = locale / lang / "LC_MESSAGES" / "auto_examples" / "plot_01_dataparallel.po"
        catalog = read(po_path)
        glued = next(m for m in messages(catalog) if "``nn.DataParallel`` " in m.string)
        glued.string = glued.string.replace("``nn.DataParallel`` ", "``nn.DataParallel``", 1)
        changed = next(m for m in messages(catalog) if "``torch.device``" in m.string)
        changed.string = changed.string.replace("``torch.device``", "``torch.Device``")
        write(catalog, po_path)
    pots = tmp_path / "pot"
    for po_path in (locale / "zh_CN" / "LC_MESSAGES").rglob("*.po"):
        pot = pots / po_path.relative_to(locale / "zh_CN" / "LC_MESSAGES").with_suffix(".pot")
        write(template_of(read(po_path)), pot)

    def findings():  # as make check finds them in a checkout whose locale/ this is
        problems = gate.run_checks(["zh_CN", "zh_TW"], set(gate.CHECKS), locale, pots, sources=ROOT / "docs")
        return by_entry([(os.path.abspath(p.path), p.line, p.check, p.message, p.severity) for p in problems])

    with_lines = findings()
    strip_locations(locale)
    assert findings() == with_lines
    found = {(Path(path).parts[-4], check, message) for path, _, check, message, _ in with_lines}
    for lang in ("zh_CN", "zh_TW"):
        assert (
            lang,
            "markup",
            "changes ``torch.device`` to ``torch.Device``: copy inline code exactly",
        ) in found
        assert any(message.startswith("unbalanced ``") for language, _, message in found if language == lang)
    assert {check for _, check, _ in found} == {"markup"}


def test_project_syntax_and_targets_come_from_the_sources(tmp_path):
    sources, locale = tmp_path / "docs", tmp_path / "locale"
    (sources / "guide").mkdir(parents=True)
    (sources / "index.md").write_text("(start)=\n# Start\n\n```{glossary}\nreplica\n  A copy.\n```\n")
    (sources / "guide" / "setup.rst").write_text(
        ".. _setup-guide:\n\nSetup\n=====\n\n.. glossary::\n\n   worker\n      One process.\n"
    )
    for name in ("index", "guide/setup", "auto_examples/plot_01", "sphinx"):
        po_path = locale / "zh_CN" / "LC_MESSAGES" / f"{name}.po"
        po_path.parent.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(locale="zh_CN")
        catalog.add("See :ref:`start`.", "见 :ref:`start`。")
        write(catalog, po_path)
    project = Project(locale, sources)
    syntax = {
        po.relative_to(locale).as_posix(): project.syntax(po, project.catalog_file(po).entries[0])
        for po in project.catalogs()
    }
    assert syntax == {
        "zh_CN/LC_MESSAGES/index.po": "myst",
        "zh_CN/LC_MESSAGES/guide/setup.po": "rst",
        "zh_CN/LC_MESSAGES/auto_examples/plot_01.po": "rst",  # generated: reST
        "zh_CN/LC_MESSAGES/sphinx.po": "text",
    }
    setup = locale / "zh_CN" / "LC_MESSAGES" / "guide" / "setup.po"

    def resolves(text, project=project):
        [role] = parse(text, "rst", project.roles).roles
        return project.resolves(setup, role)

    assert [
        resolves(t)
        for t in (
            ":ref:`setup-guide`",
            ":ref:`开始 <start>`",
            ":term:`Worker`",
            ":term:`replica`",
            ":doc:`../index`",
            ":doc:`/guide/setup`",
        )
    ] == [True] * 6
    assert [resolves(t) for t in (":ref:`setup`", ":term:`workers`", ":doc:`index`")] == [False] * 3
    foreign = Project(locale)  # no sources: an unknown English target may exist elsewhere
    assert resolves(":ref:`setup`", foreign) is None and resolves(":ref:`设置`", foreign) is False
    bare = Catalog().add("x", "y", [("../../docs/x.md", 3)])
    assert foreign.syntax(setup, bare) == "myst"
    assert Project(locale, default_syntax="text").syntax(setup, Catalog().add("x")) == "text"


@pytest.fixture(scope="module")
def real_check():
    """Run ``make check`` (strict, every check) on the project's catalogs once.

    Without "Entering directory" lines, which a ``make -C DIR test`` around it would add.
    """
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "check"], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.data
def test_real_catalogs_pass_all_checks_but_completeness(real_check):
    assert "error:" not in real_check.stderr  # the English could be extracted
    lines = real_check.stdout.splitlines()
    assert [line for line in lines if "[completeness]" not in line] == []


# -- stat, review, seed -----------------------------------------------------------


def test_stat_counts_each_catalog_and_the_total(capsys):
    bad = FIXTURES / "bad" / "completeness"
    catalogs_cli.main(["stat", "zh_CN", "--locale-dir", str(bad)])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["page", "1", "1", "1", "33%"] in rows
    assert ["total", "1", "1", "1", "33%"] in rows


def test_review_shows_a_word_diff_of_fuzzy_entries_at_their_msgstr(capsys):
    bad = FIXTURES / "bad" / "completeness"
    po_path = bad / "zh_CN" / "LC_MESSAGES" / "page.po"
    lines = po_path.read_text("utf-8").splitlines()
    fuzzy, untranslated = (
        next(n for n in range(m.lineno, len(lines) + 1) if lines[n - 1].startswith("msgstr"))
        for m in messages(read(po_path))
        if not is_translated(m)
    )
    catalogs_cli.main(["review", "zh_CN", "--locale-dir", str(bad)])
    shown = os.path.relpath(po_path)
    assert capsys.readouterr().out == (
        f"{shown}:{fuzzy}: fuzzy (the English changed)\n"
        "  change:      Read the tutorials in {+the+} order {+shown+}.\n"
        "  new English: Read the tutorials in the order shown.\n"
        "  translation: 请按顺序阅读教程。\n\n"
        f"{shown}:{untranslated}: untranslated\n"
        "  English: Results\n\n"
        "zh_CN: 1 fuzzy, 1 untranslated\n"
    )


@pytest.mark.gettext
def test_seed_fills_empty_zh_tw_entries_as_fuzzy_and_only_once(tmp_path, capsys):
    shutil.copytree(FIXTURES / "good", tmp_path, dirs_exist_ok=True)
    cn_path = tmp_path / "zh_CN" / "LC_MESSAGES" / "page.po"
    tw_path = tmp_path / "zh_TW" / "LC_MESSAGES" / "page.po"
    cn, tw = read(cn_path), read(tw_path)
    kept, unfinished = messages(tw)[0].id, messages(cn)[1].id
    messages(cn)[1].flags.add("fuzzy")  # a fuzzy zh_CN translation is not used
    for message in messages(tw)[1:]:
        message.string = ""
    write(cn, cn_path)
    write(tw, tw_path)
    before = {m.id: m.string for m in messages(read(tw_path))}

    assert catalogs_cli.main(["seed-zh_TW", "--locale-dir", str(tmp_path)]) == 0
    assert "filled 11 entries" in capsys.readouterr().out
    convert = opencc.OpenCC("s2twp").convert
    cn_text = {m.id: m.string for m in messages(read(cn_path))}
    for message in messages(read(tw_path)):
        if message.id == kept:
            assert message.string == before[kept] and not message.fuzzy
        elif message.id == unfinished:
            assert message.string == ""
        else:
            assert message.string == convert(cn_text[message.id])
            assert message.flags - {"python-format", "python-brace-format"} == {"fuzzy"}

    seeded = tw_path.read_bytes()
    assert catalogs_cli.main(["seed-zh_TW", "--locale-dir", str(tmp_path)]) == 0
    assert "filled 0 entries" in capsys.readouterr().out
    assert tw_path.read_bytes() == seeded


# -- the translation-status directive ---------------------------------------------


def test_status_page_counts_catalogs_and_rebuilds_when_one_changes(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "good", src / "locale")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'conf')!r})\n"
        "extensions = ['myst_parser', 'extensions.translation_status']\nlocale_dirs = ['locale']\n"
    )
    (src / "index.md").write_text("# Status\n\n```{translation-status}\n```\n")

    def build(builder):
        result = sphinx_build("-b", builder, "-W", src, tmp_path / builder)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def rows():
        html = (tmp_path / "html" / "index.html").read_text("utf-8")
        cells = re.findall(r"<t[dh][^>]*><p>(.*?)</p></t[dh]>", html)
        return [cells[i : i + 5] for i in range(0, len(cells), 5)]

    build("html")
    assert rows()[:3] == [
        ["Page", "Progress", "Translated", "Outdated", "Untranslated"],
        ["guide", "100%", "11", "0", "0"],
        ["page", "100%", "13", "0", "0"],
    ]

    po_path = src / "locale" / "zh_CN" / "LC_MESSAGES" / "page.po"
    catalog = read(po_path)
    messages(catalog)[0].flags.add("fuzzy")
    write(catalog, po_path)
    assert "1 changed" in build("html")
    assert rows()[2] == ["page", "92%", "12", "1", "0"]

    build("gettext")
    msgids = {m.id for m in messages(read(tmp_path / "gettext" / "index.pot"))}
    # Each table's caption is the language's English name, for the reader's own script.
    captions = {f"{lang.english} ({lang.sphinx})" for lang in LANGUAGES[1:]}
    assert msgids == {"Status", "Page", "Progress", "Translated", "Outdated", "Untranslated", *captions}


# -- end to end: a changed English sentence ---------------------------------------

ADDED = " This sentence was added by a test."


def plain_paragraph(markdown):
    """Return (first, last) line numbers (0-based) of the first plain paragraph of a page.

    A plain paragraph is two or more lines of prose: no heading, list, fence or directive.
    """
    lines, block = markdown.splitlines(), []
    for number, line in enumerate([*lines, ""]):
        if line.strip() and not re.match(r"\s*(?:[#`:{<>*+|-]|\d+\.)", line):
            block.append(number)
            continue
        if len(block) >= 2:
            return block[0], block[-1]
        block = []
    pytest.fail("docs/index.md has no plain paragraph of two or more lines for this test")


def make(repo, *targets):
    """Run make in the copy *repo*, with this checkout's virtualenv."""
    venv_python = ROOT / ".venv" / "bin" / "python"
    cmd = ["make", "-o", ".venv/.installed", *targets, f"PY={venv_python}"]
    result = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def snapshot(repo):
    """Return {catalog path: bytes} of every catalog in *repo*."""
    return {p: p.read_bytes() for p in sorted((repo / "locale").rglob("*.po"))}


def entries(po_path):
    """Return {msgid: (msgstr, flags, previous msgid)} of the live entries."""
    return {m.id: (m.string, sorted(m.flags), (m.previous_id or [None])[0]) for m in messages(read(po_path))}


@pytest.mark.gettext
def test_changed_english_turns_exactly_its_entries_fuzzy(tmp_path, capsys):
    repo = copy_project(tmp_path / "repo")
    index_md = repo / "docs" / "index.md"
    lines = index_md.read_text("utf-8").splitlines()
    first, last = plain_paragraph("\n".join(lines))
    paragraph = " ".join(line.strip() for line in lines[first : last + 1])
    langs = ["zh_CN", "zh_TW"]
    old_entries = {lang: entries(repo / "locale" / lang / "LC_MESSAGES" / "index.po") for lang in langs}
    for lang in langs:
        assert paragraph in old_entries[lang], f"{lang}: no entry for {paragraph!r}"
        assert old_entries[lang][paragraph][0], f"{lang}: {paragraph!r} is not translated"
    before = snapshot(repo)

    lines[last] += ADDED
    index_md.write_text("\n".join(lines) + "\n", "utf-8")
    # The gate notices, running the gettext builder on the copy:
    sync = subprocess.run(
        [sys.executable, "-m", "gate.run_checks", "--check", "out-of-sync", "zh_CN", "zh_TW"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo / "conf")},
    )
    assert sync.returncode == 1
    assert len(sync.stdout.splitlines()) == 4  # per language: stale entry, missing English
    assert f"docs/index.md:{first + 1}: [out-of-sync] English missing from" in sync.stdout

    make(repo, "update-po")
    after = snapshot(repo)
    changed = {p for p in after if after[p] != before[p]}
    assert {p.relative_to(repo).as_posix() for p in changed} == {
        "locale/zh_CN/LC_MESSAGES/index.po",
        "locale/zh_TW/LC_MESSAGES/index.po",
    }
    for lang in langs:
        new = entries(repo / "locale" / lang / "LC_MESSAGES" / "index.po")
        old = dict(old_entries[lang])
        translation = old.pop(paragraph)[0]
        # The old translation is kept, marked fuzzy, with the old English beside it.
        assert new.pop(paragraph + ADDED) == (translation, ["fuzzy"], paragraph)
        assert new == old

    # Running it again changes nothing, and the gate is satisfied.
    make(repo, "update-po")
    assert snapshot(repo) == after
    code, problems = run_checks(
        capsys,
        "--check",
        "out-of-sync",
        "--locale-dir",
        repo / "locale",
        "--pot-dir",
        repo / "_build" / "gettext",
        "zh_CN",
        "zh_TW",
    )
    assert (code, problems) == (0, [])

    status = messages(read(repo / "_build" / "gettext" / "translation-status.pot"))
    assert not [m.id for m in status if re.search(r"\d|auto_examples|中文", m.id)]


def test_the_build_refuses_a_translation_for_its_errors_not_its_warnings(tmp_path):
    project = copy_project(tmp_path / "project")
    po_path = project / "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_dataparallel.po"
    catalog = read(po_path)
    literal = re.compile(r"``([A-Za-z_.]+)``")
    emphasis = re.compile(r"(?<![*`])\*([^*`\s][^*`]*)\*(?![*`])")
    first = next(m for m in messages(catalog) if is_translated(m) and emphasis.search(m.string))
    second = next(
        m for m in messages(catalog) if is_translated(m) and literal.search(m.string) and m is not first
    )

    def refused():
        """The translations make html would not publish, as build/site.py decides."""
        code = (
            "import sys; from build.site import CONTENT_CHECKS, refused\n"
            "langs, problems = refused(['zh_TW'], CONTENT_CHECKS)\n"
            "print(langs); sys.stderr.write(''.join(f'{p}\\n' for p in problems))"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=project / "conf", capture_output=True, text=True, check=True
        )
        return result.stdout.strip(), result.stderr

    # Emphasis left out: worth a warning, still a correct page.
    first.string = emphasis.sub(r"\1", first.string, count=1)
    write(catalog, po_path)
    check = subprocess.run(
        [sys.executable, "-m", "gate.run_checks", "zh_TW", "--check", "markup"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project / "conf")},
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0 and "[markup] warning:" in check.stdout, check.stdout
    assert refused() == ("[]", "")
    # A dropped backquote: an error, and the translation is refused, saying where.
    second.string = second.string.replace("``", "`", 1)
    write(catalog, po_path)
    langs, said = refused()
    assert langs == "['zh_TW']"
    assert re.search(r"plot_01_dataparallel\.po:\d+: \[markup\] unbalanced ``", said), said
    assert "warning" not in said


def test_a_role_glued_to_a_word_is_called_glued_where_its_other_use_is_spaced():
    """The diagnosis looks at every use of the role, not only at the first one."""
    english = "Call :meth:`open` first, then :meth:`read`."
    message = Message(english, "先调用 :meth:`open`，再调用方法:meth:`read`。", "zh_CN", "rst", _Sphinx)
    [finding] = [f for f in findings("markup", message) if f.severity == "error"]
    assert "glued to the text before it" in finding.message, finding


def test_the_gate_says_sphinx_warns_exactly_where_a_build_warns(tmp_path):
    """references asks Sphinx's own comparison: named links in another order and a role
    written not to link (``!``) made a link fail a -W build, though the stand-in parse sees
    the same references; dropping a role that is no link fails nothing (words only)."""
    src = tmp_path / "src"
    po = src / "locale" / "zh_TW" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (src / "conf.py").write_text("locale_dirs = ['locale']\nlanguage = 'zh_TW'\n")
    cases = {  # English: (translation, whether Sphinx warns)
        "Built from `Alpha`_ by `Beta`_.": ("由 `Beta`_ 從 `Alpha`_ 建置。", True),
        "The :mod:`!torch.distributed` package.": (":mod:`torch.distributed` 套件。", True),
        "Call :func:`!torch.cuda.set_device` first.": ("先呼叫 torch.cuda.set_device。", False),
        "Read :ref:`alpha` first.": ("先讀 :ref:`beta`。", True),
        "Read :ref:`beta` then.": ("再讀 :ref:`乙 <beta>`。", False),
        "Use :option:`!--alpha` here.": ("請用 :option:`!—alpha`。", False),  # no link: its text
        "The :class:`Alpha` object.": (":class:`.Alpha` 物件。", False),  # the same target
        # With #noqa Sphinx compares nothing: a dropped or added link is still wrong, silently.
        "See :ref:`alpha` too.": ("也見甲。 #noqa", False),
        "Read beta now.": ("現在讀 :ref:`beta`。 #noqa", False),
        # Sphinx links a role in a domain it lacks by the role's own name, but warns (-W fails).
        "Then read :ref:`alpha`.": ("再讀 :在:ref:`alpha`。", False),
    }
    sections = "".join(f"\n.. _{n.lower()}:\n\n{n}\n{'-' * len(n)}\n\nText.\n" for n in ("Alpha", "Beta"))
    (src / "index.rst").write_text("Links\n=====\n\n" + "\n\n".join(cases) + "\n" + sections)
    catalog = Catalog(locale="zh_TW")
    for msgid, (msgstr, _) in cases.items():
        catalog.add(msgid, msgstr)
    write(catalog, po / "index.po")
    built = sphinx_build("-q", "-b", "html", src, src / "_build")
    built.check_returncode()
    for msgid, (msgstr, warns) in cases.items():
        line = 4 + 2 * list(cases).index(msgid)
        assert (f"index.rst:{line}: WARNING: inconsistent" in built.stderr) == warns, (msgid, built.stderr)
        found = list(findings("references", Message(msgid, msgstr, "zh_TW", "rst", _Sphinx)))
        claims = [f for f in found if "Sphinx warns" in f.message]
        assert bool(claims) == warns or (warns and any("leads to" in f.message for f in found)), (
            msgid,
            found,
        )
        assert all(f.severity == "error" for f in claims)
    reordered = findings(
        "references",
        Message(
            "Built from `Alpha`_ by `Beta`_.", "由 `Beta`_ 從 `Alpha`_ 建置。 #noqa", "zh_TW", "rst", _Sphinx
        ),
    )
    assert list(reordered) == []  # the fix the error gives: with #noqa Sphinx links each by name
    said = {
        msgid: [
            (f.severity, f.message.rsplit("; ", 1)[-1])
            for f in findings("references", Message(msgid, cases[msgid][0], "zh_TW", "rst", _Sphinx))
        ]
        for msgid in list(cases)[-5:-3]
    }
    assert said == {
        "Use :option:`!--alpha` here.": [("error", "copy it as in the English")],
        "The :class:`Alpha` object.": [("warning", "check the link")],
    }, said
    english = "Call :func:`!torch.cuda.set_device` first."
    dropped = findings("references", Message(english, cases[english][0], "zh_TW", "rst", _Sphinx))
    assert [f.message for f in dropped] == ["drops :func:`!torch.cuda.set_device`"]  # words, no link
    unchecked = {
        m: [
            (f.severity, f.message)
            for f in findings("references", Message(m, cases[m][0], "zh_TW", "rst", _Sphinx))
        ]
        for m in list(cases)[-3:-1]
    }
    assert unchecked == {
        "See :ref:`alpha` too.": [("error", "drops :ref:`alpha`")],
        "Read beta now.": [("warning", "adds :ref:`beta`")],
    }, unchecked
    assert "WARNING: unknown role name: 在:ref" in built.stderr, built.stderr  # (no line given)
    domain = findings(
        "markup", Message("Then read :ref:`alpha`.", "再讀 :在:ref:`alpha`。", "zh_TW", "rst", _Sphinx)
    )
    assert [(f.severity, f.message) for f in domain] == [
        ("error", "unknown role :在:ref: (a typo or a translated role name?)")
    ]  # and nothing else: Sphinx reads a role there, :ref:, which is not glued to anything


def test_renamed_link_names_are_judged_as_sphinx_builds_them(tmp_path):
    """One renamed `name`_ with #noqa links right, silently; without, Sphinx warns; two
    renamed in one translation, #noqa or not, may each take the other's target."""
    src = tmp_path / "src"
    po = src / "locale" / "zh_TW" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (src / "conf.py").write_text("locale_dirs = ['locale']\nlanguage = 'zh_TW'\n")
    pairs = [(f"Alpha{n}", f"Beta{n}") for n in range(8)]
    cases = {  # English: (translation, what the check must say)
        "One see `Alpha0`_ here.": ("一見 `甲`_。 #noqa", None),
        "Two see `Alpha0`_ here.": ("二見 `甲`_。", "inconsistent references"),
        **{
            f"Pair see `{a}`_ and `{b}`_.": (f"對見 `甲{a}`_ 和 `乙{b}`_。 #noqa", "another's target")
            for a, b in pairs
        },
    }
    sections = "".join(f"\n{name}\n{'-' * len(name)}\n\nText.\n" for pair in pairs for name in pair)
    (src / "index.rst").write_text("Links\n=====\n\n" + "\n\n".join(cases) + "\n" + sections)
    catalog = Catalog(locale="zh_TW")
    for msgid, (msgstr, _) in cases.items():
        catalog.add(msgid, msgstr)
    write(catalog, po / "index.po")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_build")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    warned = re.findall(r"inconsistent references .*original: \['`(\w+)`_'", built.stderr)
    assert warned == ["Alpha0"], built.stderr  # the second paragraph's, alone
    html = (src / "_build" / "index.html").read_text("utf-8")
    links = {p[:1]: re.findall(r'href="#(\w+)"[^>]*>([^<]+)<', p) for p in re.findall(r"<p>(.*?)</p>", html)}
    assert links["一"] == [("alpha0", "甲")]
    swapped = [p for p in re.findall(r"<p>對見(.*?)</p>", html) if re.search(r'href="#beta\d"[^>]*>甲', p)]
    assert swapped, "no pair swapped: the case needs other names"
    for msgid, (msgstr, said) in cases.items():
        found = list(findings("references", Message(msgid, msgstr, "zh_TW", "rst", _Sphinx)))
        if said is None:
            assert found == [], (msgid, found)
        else:
            assert [f.severity for f in found] == ["error"] and said in found[0].message, (msgid, found)


def test_every_line_of_a_catalog_is_one_the_pdf_can_show():
    """A translator's comment or an old entry too (tests/test_locale_inputs.py reads each line)."""
    text = '# 译者注：见🙂\nmsgid "a"\nmsgstr "甲"\n#~ msgid "b"\n#~ msgstr "乙𓀀"\n'
    assert [line for line, _ in catalog.glyphless_lines(text)] == [1, 5]
    assert "U+1F642" in catalog.glyphless_lines(text)[0][1]


def test_english_reads_a_tutorials_code_comment_as_its_page_shows_it():
    """Calls and Python's keywords in a comment are code; a comment must hold Chinese."""
    example = ROOT / "examples" / "plot_01_dataparallel.py"
    comment = min(english._code_texts(example), key=len)  # a comment or docstring of its code
    project = Project(ROOT / "locale", ROOT / "docs")
    catalog = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "auto_examples" / "plot_01_dataparallel.po"

    def said(msgstr):
        return [f.message for f in english.check(Message(comment, msgstr, "zh_CN", "rst", project, catalog))]

    assert said("调用 len(x)，返回 None。") == []
    assert said("DDP 2.13") == ["a comment of the code with no Chinese in zh_CN: translate it"]
    assert "'the'" in said("调用 the len(x)")[0]
    # In a paragraph of the page, None is a word a reader sees.
    paragraph = Message("It returns nothing.", "返回 None。", "zh_CN", "rst", project, catalog)
    assert [f.message for f in english.check(paragraph)] != []
