"""A translation adds words, never script (conf/extensions/translation_safety.py).

Every kind of injection is tried in a catalog of a tiny project with a reST
page and a MyST page (tests/roots/translation-safety), built without ``-W``:
the build must fail naming the catalog and line, and what it wrote must hold
no script. The same markup in the English sources must build. Then the two
attacks of the issue go into the catalogs of a copy of the mini site (the
project's own Makefile and build on one page and one tutorial): ``make html``
must fail and keep the last good site, and Chromium loads a preview built
anyway. Last, Chromium loads the real site under its Content-Security-Policy.
"""

import collections
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import outside_env, run_module, sphinx_build
from conftest import SCRIPTED
from babel.messages.pofile import write_po
from catalogs.po import messages, read  # conf/ is on sys.path (conftest)
from gate.run_checks import ENTRY_CHECKS, run_checks

TESTS = Path(__file__).resolve().parent
FIXTURE = TESTS / "roots" / "translation-safety"
SECRET = "TOP-SECRET-7f3c"  # in secret.txt beside the fixture's pages: must never be published
TUTORIAL = "auto_examples/plot_01_dataparallel.html"
REFRESH = '"><meta http-equiv="refresh" content="0;url=//example.org/">'

RST = ("index.po", "A plain paragraph about zebras.")
MYST = ("page.po", "A plain paragraph about giraffes.")
RST_LINK = ("index.po", "A paragraph with a `link <https://example.org>`_ and ``code``.")
MYST_LINK = ("page.po", "A paragraph with a [link](https://example.org).")
PAGES = {"index.po": "index.rst", "page.po": "page.md"}  # the fixture's pages, by catalog
FOOTER = 'Made with <a href="https://www.sphinx-doc.org/">Sphinx</a>'
# id: (catalog, msgid, msgstr, what the refusal says)
INJECTIONS = {
    "rst-raw-role": (*RST, "斑馬 :raw-html:`<img src=x onerror=alert(1)>`", "raw html"),
    "rst-raw-directive": (*RST, ".. raw:: html\n\n   <script>alert(1)</script>", "not one paragraph"),
    # Line separators are invisible characters: not compiled at all (gate/words.py).
    "rst-directive-after-text": (
        *RST,
        "斑馬。\u2028\u2028.. raw:: html\u2028\u2028   <b>x</b>",
        "U+2028 (LINE SEPARATOR)",
    ),
    "rst-javascript-link": (*RST, "斑馬 `點這裡 <javascript:alert(1)>`_", "not http(s)"),
    "rst-image": (*RST, ".. image:: javascript:alert(1)", "not one paragraph"),
    "rst-include": (*RST, ".. include:: secret.txt", "not one paragraph"),
    "rst-literalinclude": (*RST, ".. literalinclude:: secret.txt", "not one paragraph"),
    "rst-only": (*RST, ".. only:: html", "not one paragraph"),
    # A directive Sphinx itself fails on: a refusal at the entry, not a traceback.
    "rst-crashing-directive": (*RST, ".. productionlist:: x", "not one paragraph"),
    "myst-crashing-directive": (*MYST, "```{productionlist} x\n```", "not one paragraph"),
    "rst-download-role": (*RST, "斑馬 :download:`檔案 <secret.txt>`", "download_reference"),
    "rst-title": ("index.po", "Safety", "安全 :raw-html:`<img src=x onerror=1>`", "raw html"),
    "myst-inline-html": (*MYST, '長頸鹿 <img src=x onerror="alert(1)">', "raw html"),
    "myst-html-block": (*MYST, '<div onclick="alert(1)">長頸鹿</div>', "not one paragraph"),
    "myst-link": (*MYST, "長頸鹿 [點這裡](ftp://example.org/) [x](javascript:alert(1))", "not http(s)"),
    "myst-image": (*MYST, "長頸鹿 ![x](secret.txt)", "image"),
    "myst-eval-rst": (*MYST, "```{eval-rst}\n.. raw:: html\n\n   <b>x</b>\n```", "not one paragraph"),
    "myst-include": (*MYST, "```{include} secret.txt", "not one paragraph"),
    "myst-raw-role": (*MYST, "長頸鹿 {raw-html}`<img src=x onerror=alert(1)>`", "raw html"),
    "myst-download-role": (*MYST, "長頸鹿 {download}`檔 <secret.txt>`", "download_reference"),
    "myst-title": ("page.po", "A MyST page", "頁面 <img src=x onerror=alert(1)>", "raw html"),
    "interface-html": (
        "sphinx.po",
        FOOTER,
        '以 <a href="javascript:alert(1)">Sphinx</a> 建置',
        "HTML is not exactly",
    ),
    "interface-html-quote": (
        "sphinx.po",
        FOOTER,
        '以 <a href="https://www.sphinx-doc.org/">Sphinx</a> 建置" x="',
        'adds "',
    ),
    # Links to hosts the English does not link, however they are spelled.
    "rst-scheme-relative": (*RST_LINK, "含 `連結 <//evil.example/x>`_ 與 ``code``。", "evil.example"),
    # reST reads "\\\\" as one backslash: the page links /\\evil.example/x.
    "rst-backslash": (*RST_LINK, "含 `連結 </\\\\evil.example/x>`_ 與 ``code``。", "evil.example"),
    "rst-no-slashes": (*RST_LINK, "含 `連結 <https:evil.example>`_ 與 ``code``。", "evil.example"),
    "myst-entities": (*MYST_LINK, "含[連結](https&#58;&#47;&#47;evil.example/x)的文字。", "evil.example"),
    # MyST makes a link without a scheme a cross-reference (a fragment, "#/x"), not a URL.
    "myst-backslash": (*MYST_LINK, "含[連結](https:/\\evil.example/x)的文字。", "evil.example"),
    "myst-userinfo": (*MYST_LINK, "含[連結](https://example.org@evil.example/)的文字。", "evil.example"),
    "rst-upper-case": (*RST_LINK, "含 `連結 <HTTPS://EVIL.example/>`_ 與 ``code``。", "evil.example"),
    "myst-mailto": (*MYST_LINK, "含[連結](mailto:me@evil.example)的文字。", "not http(s): mailto"),
    # Another port of the English's host is another server.
    "rst-port": (*RST_LINK, "含 `連結 <https://example.org:2375/>`_ 與 ``code``。", "example.org:2375"),
    "myst-port": (*MYST_LINK, "含[連結](https://example.org:8443/x)的文字。", "example.org:8443"),
    # Invisible and direction-changing characters are not compiled at all.
    "rst-bidi": (*RST, "斑馬\u202e txt.exe", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    "myst-zero-width": (*MYST, "長\u200b頸鹿", "U+200B (ZERO WIDTH SPACE)"),
}


def fixture_copy(tmp_path, translations=None):
    """Copy the fixture project, set *translations* {catalog: {msgid: msgstr}}; return it."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    (src / "secret.txt").write_text(SECRET + "\n", "utf-8")
    for catalog, entries in (translations or {}).items():
        path = src / "locale" / "zh_TW" / "LC_MESSAGES" / catalog
        po = read(path)
        for msgid, msgstr in entries.items():
            po.get(msgid).string = msgstr
        write_unwrapped(po, path)
    return src.resolve()


def write_unwrapped(catalog, path):
    """Write *catalog* with every string on one line, as some PO editors save it."""
    with open(path, "wb") as file:
        write_po(file, catalog, width=0)


def msgstr_line(po, msgid):
    """The line number of *msgid*'s msgstr in the catalog file *po*."""
    lines = Path(po).read_text("utf-8").splitlines()
    quoted = 'msgid "' + msgid.replace("\\", "\\\\").replace('"', '\\"') + '"'
    start = lines.index(quoted)
    return next(n for n in range(start + 1, len(lines) + 1) if lines[n - 1].startswith("msgstr"))


def sphinx(src, out, *options, language="zh_TW", werror=False):
    """Build *src* into *out* (without -W unless *werror*); return the finished process."""
    doctrees = out.with_name(out.name + "-doctrees")
    strict = ["-W", "--keep-going"] if werror else []
    return sphinx_build(
        "-b", "html", "-q", "-D", f"language={language}", "-d", doctrees, *options, src, out, *strict
    )


def scripts_in(folder):
    """What in *folder*'s pages could run: on* attributes, javascript: URLs, <script> alerts."""
    found = []
    for page in sorted(Path(folder).rglob("*.html")):
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        for element in soup.find_all(True):
            for name, value in element.attrs.items():
                value = " ".join(value) if isinstance(value, list) else value
                if name.lower().startswith("on") or re.match(r"\s*javascript:", value, re.I):
                    found.append(f"{page.name}: <{element.name} {name}={value!r}>")
            if element.name == "script" and "alert" in element.get_text():
                found.append(f"{page.name}: <script>{element.get_text()}</script>")
    return found


def published(folder, text):
    """The files under *folder* that contain *text*."""
    return [p for p in Path(folder).rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_faithful_translations_build_and_keep_the_englishs_markup(tmp_path):
    src = fixture_copy(tmp_path)
    result = sphinx(src, tmp_path / "out", werror=True)
    assert result.returncode == 0, result.stderr
    index = BeautifulSoup((tmp_path / "out" / "index.html").read_text("utf-8"), "html.parser")
    page = BeautifulSoup((tmp_path / "out" / "page.html").read_text("utf-8"), "html.parser")
    # The raw HTML, mailto link and download that the English has are kept.
    assert index.find("kbd").get_text() == "Ctrl" and page.find("kbd").get_text() == "Tab"
    assert index.find("a", href=re.compile("^mailto:")).get_text() == "郵件連結"
    assert index.find("a", class_="download").get_text() == "下載"
    assert index.find("img")["alt"] == "一匹斑馬"
    # So are the interface strings' HTML, in text, attribute and CSS.
    interface = index.find("p", class_="interface")
    assert interface["title"] == "一個標題" and interface.find("a").get_text() == "Sphinx"
    assert '--label: "標籤"' in index.find("style").get_text()


def build_injections(folder, cases, *options):
    """Build each of *cases* {id: (catalog, msgid, msgstr, reason)} in as few builds as can hold them.

    A case in a page's catalog gets a copy of that page, and of its catalog
    holding the injection, under the case's name: every such case fits in one
    build. sphinx.po is every page's, so a build holds one case per entry of it.
    Return {id: (the catalog injected, the output folder, the finished build)}.
    """
    builds, shared = {}, collections.Counter()
    for case, (catalog, msgid, _, _) in cases.items():
        number = shared[msgid] if catalog == "sphinx.po" else 0
        shared[msgid] += catalog == "sphinx.po"
        builds.setdefault(number, []).append(case)
    built = {}
    for number, names in builds.items():
        src = fixture_copy(folder / f"build-{number}")
        messages = src / "locale" / "zh_TW" / "LC_MESSAGES"
        catalogs = {}
        for case in names:
            catalog, msgid, msgstr, _ = cases[case]
            if catalog != "sphinx.po":
                page = PAGES[catalog]
                shutil.copy(src / page, src / (case + Path(page).suffix))
                catalog = case + ".po"
                shutil.copy(messages / cases[case][0], messages / catalog)
            po = read(messages / catalog)
            po.get(msgid).string = msgstr
            write_unwrapped(po, messages / catalog)
            catalogs[case] = messages / catalog
        out = folder / f"build-{number}-out"
        result = sphinx(src, out, *options)  # no -W: refusals fail the build anyway
        built.update((case, (catalogs[case], out, result)) for case in names)
    return built


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    """Every injection, in two builds (the two cases of one sphinx.po entry need one each)."""
    return build_injections(tmp_path_factory.mktemp("injections"), INJECTIONS)


@pytest.fixture(scope="module")
def make_check_errors(injected):
    """make check's errors on every injected catalog: {catalog: {line}}."""
    found = collections.defaultdict(set)
    for locale in {po.parents[2] for po, _, _ in injected.values()}:
        for problem in run_checks(["zh_TW"], {"syntax", *ENTRY_CHECKS}, locale, sources=locale.parent):
            if problem.severity == "error":
                found[Path(problem.path).resolve()].add(problem.line)
    return found


@pytest.mark.parametrize("case", INJECTIONS)
def test_make_check_refuses_every_entry_the_build_refuses(injected, make_check_errors, case):
    """One judge (gate/safety.py): the gate says no before the build does."""
    po, msgid = injected[case][0], INJECTIONS[case][1]
    lines = Path(po).read_text("utf-8").split("\n")
    first = msgstr_line(po, msgid)
    last = next(n for n in range(first, len(lines) + 1) if not lines[n - 1].strip())
    assert make_check_errors[Path(po).resolve()] & set(range(first, last)), case


def assert_refused(po, msgid, reason, result):
    """The build failed naming *po*'s line of *msgid*'s msgstr with *reason*."""
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    location = f"{po}:{msgstr_line(po, msgid)}: ERROR: translation refused"
    said = [line for line in output.splitlines() if line.startswith(location)]
    assert said and reason in said[0], (location, reason, output)


@pytest.mark.parametrize("case", INJECTIONS)
def test_injection_fails_the_build_and_is_shown_as_text(injected, case):
    po, out, result = injected[case]
    assert_refused(po, INJECTIONS[case][1], INJECTIONS[case][3], result)
    # What was written is neutralised: nothing runs, nothing is included.
    assert scripts_in(out) == []
    assert published(out, SECRET) == []


TARGETS = ("-D", "gettext_additional_targets=raw,image")
ADDITIONAL = {
    "raw": ("index.po", '<hr class="fixture">', '<img src=x onerror="alert(1)">', "raw html"),
    "image": ("index.po", ".. image:: zebra.svg", ".. image:: secret.txt", "image"),
}


@pytest.fixture(scope="module")
def additional(tmp_path_factory):
    """The fixture, and the injections of ADDITIONAL, built with raw blocks and images translatable."""
    folder = tmp_path_factory.mktemp("additional")
    faithful = sphinx(fixture_copy(folder / "faithful"), folder / "faithful-out", *TARGETS)
    return faithful, build_injections(folder, ADDITIONAL, *TARGETS)


@pytest.mark.parametrize("case", ADDITIONAL)
def test_additional_targets_keep_the_englishs_markup(additional, case):
    """With raw blocks and images translatable, a translation still cannot change them."""
    faithful, injected = additional
    assert faithful.returncode == 0, faithful.stderr
    po, out, result = injected[case]
    assert_refused(po, ADDITIONAL[case][1], ADDITIONAL[case][3], result)
    assert scripts_in(out) == []
    assert published(out, SECRET) == []


def test_interface_strings_that_could_leave_their_place_are_refused(tmp_path):
    """Sphinx's Python and other projects' scripts write interface strings as they are.

    So a translation that adds a character able to end an attribute, a tag or
    a CSS string is not compiled: the page shows the English, and the build
    fails naming the entry. The templates' own escaping stays behind it.
    """
    attribute = '標題" onmouseover="alert(1)'
    css = '標籤"; } </style><script>alert(1)</script><style>\nbody{background:url(//evil.example/x)}'
    src = fixture_copy(tmp_path, {"sphinx.po": {"A title": attribute, "Label": css}})
    result = sphinx(src, tmp_path / "out")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    po = src / "locale" / "zh_TW" / "LC_MESSAGES" / "sphinx.po"
    for msgid in ("A title", "Label"):
        assert f"{po}:{msgstr_line(po, msgid)}: ERROR: translation refused: it adds" in output
    index = BeautifulSoup((tmp_path / "out" / "index.html").read_text("utf-8"), "html.parser")
    interface = index.find("p", class_="interface")
    assert interface["title"] == "A title" and "onmouseover" not in interface.attrs
    style = index.find("style").get_text()
    assert "</style" not in style and "url(" not in style and "Label" in style
    assert scripts_in(tmp_path / "out") == []


def test_the_templates_escape_what_a_translation_can_still_hold():
    """The second layer, should a string ever reach a template unrefused."""
    from markupsafe import Markup

    from extensions.translation_safety import css_string, shown_translation

    css = '標籤"; } </style><script>alert(1)</script><style>\nbody{background:url(//x)}'
    quoted = css_string(css)
    assert "</" not in quoted and "\n" not in quoted and quoted.count('"') == 2
    assert re.sub(r"\\([0-9a-f]+) ", lambda m: chr(int(m[1], 16)), quoted[1:-1]) == css
    never = lambda english, translation: []  # noqa: E731  (a rule that refuses nothing)
    assert shown_translation("A title", '標題" x="', never) == Markup.escape('標題" x="')
    footer = 'Made with <a href="https://www.sphinx-doc.org/">Sphinx</a>'
    assert shown_translation(footer, '以 <a href="javascript:x">Sphinx</a>', never) == Markup(footer)


def test_the_templates_write_the_english_where_the_interface_rule_refuses():
    """The rule that compiled no such entry judges again where the template writes it."""
    from markupsafe import Markup

    from extensions.translation_safety import shown_translation
    from gate.words import interface_verdict

    rule = lambda english, translation: interface_verdict(english, translation, (), "zh_TW")  # noqa: E731
    assert shown_translation("A title", '標題" x="', rule) == Markup.escape("A title")
    english = "%(count)s × GPU emulated on the CPU, with PyTorch %(torch)s."
    for claim in (
        "８ × ＮＶＩＤＩＡ Ｈ１００，PyTorch ２．１４。",
        "%(count)s 個 GPU（模擬），PyTorch 某版。",
    ):
        assert shown_translation(english, claim, rule) == Markup.escape(english)
    fine = "%(count)s 個 GPU（在 CPU 上模擬），使用 PyTorch %(torch)s。"
    assert shown_translation(english, fine, rule) == Markup.escape(fine)


def test_a_link_to_another_page_of_a_linked_host_is_allowed(tmp_path):
    src = fixture_copy(tmp_path, {MYST_LINK[0]: {MYST_LINK[1]: "含[連結](https://example.org/zh-tw/)。"}})
    result = sphinx(src, tmp_path / "out", werror=True)
    assert result.returncode == 0, result.stderr
    page = BeautifulSoup((tmp_path / "out" / "page.html").read_text("utf-8"), "html.parser")
    assert page.find("a", string="連結")["href"] == "https://example.org/zh-tw/"


def compile_to(po, mo, replace):
    """Write *mo* compiled from *po* with each msgstr changed by ``replace(msgid, msgstr)``."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(po, "rb") as file:
        catalog = read_po(file)
    for message in catalog:
        if message.id:
            message.string = replace(message.id, message.string)
    with open(mo, "wb") as file:
        write_mo(file, catalog)


def test_a_compiled_catalog_on_disk_is_never_used(tmp_path):
    """A .mo committed beside its .po, with the same mtime (a fresh clone), or instead of it."""
    src = fixture_copy(tmp_path)
    messages = src / "locale" / "zh_TW" / "LC_MESSAGES"
    for name in ("index", "page"):
        po, mo = messages / f"{name}.po", messages / f"{name}.mo"
        compile_to(po, mo, lambda msgid, msgstr: "UNCHECKED-MO " + msgstr)
        stamp = po.stat().st_mtime_ns
        os.utime(mo, ns=(stamp, stamp))
    result = sphinx(src, tmp_path / "out", werror=True)
    assert result.returncode == 0, result.stderr
    assert published(tmp_path / "out", "UNCHECKED-MO") == []
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert "一段關於斑馬的文字。" in index  # the .po's translation

    (messages / "page.po").unlink()  # page.mo now stands instead of it: refused, named, unread
    result = sphinx(src, tmp_path / "out2")
    assert result.returncode != 0
    assert f"{messages / 'page.mo'}:1: ERROR: translation refused: not a catalog (.po)" in result.stderr
    assert published(tmp_path / "out2", "UNCHECKED-MO") == []


def test_a_plural_entry_is_refused_and_not_served(tmp_path):
    """gettext would serve msgstr[0]; the English has no plural, and the checks see no msgstr."""
    src = fixture_copy(tmp_path)
    po = src / "locale" / "zh_TW" / "LC_MESSAGES" / "sphinx.po"
    text = po.read_text("utf-8").replace(
        'msgid "A title"\nmsgstr "一個標題"',
        'msgid "A title"\nmsgid_plural "Titles"\nmsgstr[0] "PLURAL-FORM"',
    )
    po.write_text(text, "utf-8")
    result = sphinx(src, tmp_path / "out")
    assert result.returncode != 0
    line = text.splitlines().index('msgid "A title"') + 1
    assert f"{po}:{line}: ERROR: translation refused: an entry with a plural form" in result.stderr
    assert published(tmp_path / "out", "PLURAL-FORM") == []


def test_refused_translation_still_fails_an_unchanged_rebuild(injected):
    po, out, _ = injected["rst-javascript-link"]
    again = sphinx(po.parents[3], out)  # the injections' build, again: nothing to re-read
    assert again.returncode != 0
    assert "not http(s)" in again.stderr


def test_translations_js_beside_the_catalogs_stops_the_build(tmp_path):
    src = fixture_copy(tmp_path)
    script = src / "locale" / "zh_TW" / "LC_MESSAGES" / "sphinx.js"
    script.write_text("alert(1);\n", "utf-8")
    result = sphinx(src, tmp_path / "out")
    assert result.returncode != 0
    assert f"{script}:1: ERROR: translation refused: not a catalog (.po)" in result.stderr
    assert not list((src / "_compiled").rglob("*.js"))  # what Sphinx reads holds .mo only
    assert "alert(1)" not in (tmp_path / "out" / "_static" / "translations.js").read_text("utf-8")


ENGLISH_RST = """
English :raw-html:`<img src=x onerror="alert(1)">` and `a link <javascript:alert(1)>`_.

.. raw:: html

   <div onclick="alert(1)">A block.</div>
"""
ENGLISH_MYST = """
English <img src=x onerror="alert(1)"> inline.

<div onclick="alert(1)">A block.</div>
"""


@pytest.mark.parametrize("language", ["en", "zh_TW"])
def test_english_sources_are_trusted(tmp_path, language):
    src = fixture_copy(tmp_path)
    for name, added in (("index.rst", ENGLISH_RST), ("page.md", ENGLISH_MYST)):
        (src / name).write_text((src / name).read_text("utf-8") + added, "utf-8")
    result = sphinx(src, tmp_path / "out", language=language, werror=True)
    assert result.returncode == 0, result.stderr
    found = scripts_in(tmp_path / "out")
    expected = [
        "index.html: <img onerror=",
        "index.html: <a href='javascript:alert(1)'>",
        "index.html: <div onclick=",
        "page.html: <img onerror=",
        "page.html: <div onclick=",
    ]
    for start in expected:
        assert any(item.startswith(start) for item in found), (start, found)


# -- The real site -------------------------------------------------------------


def tree_digest(folder):
    """One sha256 over every file under *folder* and its path."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def first_msgid(po, start):
    """The first msgid of the catalog *po* that starts with *start*."""
    return next(m.id for m in messages(read(po)) if m.id.startswith(start))


def inject(po, msgid, append=None, replace=None):
    """Append to (or replace) *msgid*'s translation in the catalog *po*."""
    catalog = read(po)
    entry = catalog.get(msgid)
    entry.string = replace if replace is not None else entry.string + append
    write_unwrapped(catalog, po)


# The mini site's tutorial, drawing a figure after the paragraph that introduces it.
FIGURE = """
import matplotlib.pyplot as plt

fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
"""


@pytest.mark.browser
def test_make_html_refuses_the_issues_attacks_and_a_preview_runs_none(mini_site, tmp_path, visit, serve):
    project = mini_site  # the build machinery of the project, on one page and one tutorial
    example = project / "examples" / "plot_01_tiny.py"
    example.write_text(example.read_text("utf-8") + FIGURE, "utf-8")
    before = tree_digest(project / "_build" / "html" / "zh_TW")
    messages = project / "locale" / "zh_TW" / "LC_MESSAGES"
    landing = messages / "index.po"  # MyST
    tutorial = messages / "auto_examples" / "plot_01_tiny.po"  # reST
    landing_msgid = first_msgid(landing, "This site has one page")
    tutorial_msgid = first_msgid(tutorial, "It prints one line")
    inject(landing, landing_msgid, append=' <img src=x onerror="alert(1)">')
    inject(tutorial, tutorial_msgid, append=" `點這裡 <javascript:alert(2)>`_")
    # Plain text that looks like HTML is words, not markup: shown, and never run.
    title = "只有一頁的網站 <img src=x onerror=alert(3)>"
    escaped = title.replace("<", "&lt;").replace(">", "&gt;")  # MyST: entities are text
    inject(landing, "A one-page site", replace=escaped)
    # Words that Sphinx-Gallery copies into the figure's alt attribute.
    figure_msgid = first_msgid(tutorial, "The line it prints")
    inject(tutorial, figure_msgid, append=REFRESH)

    result = subprocess.run(
        ["make", "html", "LANGUAGES=zh_TW"],
        cwd=project,
        env=outside_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    refused = [(landing, landing_msgid, "raw html"), (tutorial, tutorial_msgid, "a link that is not http(s)")]
    for po, msgid, reason in refused:
        line = msgstr_line(po, msgid)
        assert f"{po.resolve()}:{line}: ERROR: translation refused: {reason}" in output
    assert tree_digest(project / "_build" / "html" / "zh_TW") == before
    assert not (project / "_build" / "html" / ".zh_TW.staging").exists()

    # A host that published a build without -W would serve this: nothing runs.
    preview = tmp_path / "preview"
    args = ["-b", "html", "-q", "-c", "conf", "-D", "language=zh_TW", "-d", tmp_path / "doctrees"]
    built = run_module(project, "sphinx", *args, "docs", preview, timeout=600)
    assert built.returncode != 0
    root = serve(preview)
    tutorial_page = "auto_examples/plot_01_tiny.html"
    for path, shown in (("index.html", 'onerror="alert(1)"'), (tutorial_page, "javascript:alert(2)")):
        page, dialogs, requests = visit(root + path, shot=f"translation-safety-{Path(path).stem}")
        assert dialogs == [] and page.url == root + path
        assert [url for url in requests if not url.startswith(root)] == []
        assert page.evaluate(SCRIPTED) == []
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        assert shown in page.inner_text("article")  # the translator sees what was refused
    alt = page.locator("img.sphx-glr-single-img").first.get_attribute("alt")
    assert alt.endswith(REFRESH)  # words in the attribute, not an element
    page, _, _ = visit(root + "index.html")
    assert page.inner_text(".sidebar-brand-text") == title and page.title() == title


@pytest.mark.browser
def test_site_scripts_run_under_its_content_security_policy(site, visit, serve):
    root = serve(site)
    for path in (
        f"zh_TW/{TUTORIAL}",
        "zh_CN/index.html",
        "en/search.html?q=DataParallel",
        "zh_TW/search.html?q=批次",
    ):
        page, _, _ = visit(root + path)
        assert "Content-Security-Policy" in page.content()
        seen = page.evaluate("window.__seen")
        assert seen == {"violations": [], "errors": []}, (path, seen)
        assert page.evaluate("document.body.dataset.theme") == "auto"  # the theme's inline script
        if "search" in path:
            page.locator("#search-results ul.search li a").first.wait_for(timeout=15_000)


@pytest.mark.browser
def test_content_security_policy_stops_script_that_got_into_a_page(site, visit, serve):
    root = serve(site)
    html = (site / "zh_TW" / "index.html").read_text("utf-8")
    planted = html.replace(
        "<article",
        '<img src="x" onerror="alert(1)"><a id="planted" href="javascript:alert(2)">planted</a><article',
        1,
    )

    def fulfil(route):
        route.fulfill(body=planted, content_type="text/html; charset=utf-8")

    page, dialogs, _ = visit(root + "zh_TW/planted.html", route=fulfil)
    page.click("#planted")
    page.wait_for_timeout(500)
    assert dialogs == []
    directives = {v.split()[0] for v in page.evaluate("window.__seen.violations")}
    assert directives == {"script-src-attr", "script-src-elem"}, directives


ELSEWHERE = (
    '<img id="x-img" src="http://127.0.0.2:9/x.png">'
    '<link rel="stylesheet" href="//127.0.0.2:9/x.css">'
    '<iframe src="http://127.0.0.2:9/frame"></iframe>'
    '<object data="http://127.0.0.2:9/x.swf"></object>'
    '<form action="http://127.0.0.2:9/f"><button id="x-submit">go</button></form>'
)


@pytest.mark.browser
def test_content_security_policy_loads_nothing_from_elsewhere(site, visit, serve):
    """Markup that got into a page (it never should) reaches no other site."""
    root = serve(site)
    html = (site / "zh_TW" / "index.html").read_text("utf-8")
    planted = html.replace("<article", ELSEWHERE + "<article", 1)

    def fulfil(route):
        route.fulfill(body=planted, content_type="text/html; charset=utf-8")

    page, _, requests = visit(root + "zh_TW/planted.html", route=fulfil)
    page.evaluate("document.getElementById('x-submit').click()")  # blocked: no navigation
    page.wait_for_timeout(500)
    assert [url for url in requests if "127.0.0.2" in url] == []
    directives = {v.split()[0] for v in page.evaluate("window.__seen.violations")}
    assert {"img-src", "style-src-elem", "frame-src", "object-src", "form-action"} <= directives
