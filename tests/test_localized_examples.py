"""A Chinese reader's tutorial is Chinese end to end: its downloads, code comments and figures.

Read from the suite's shared build (the ``site`` fixture): each Chinese
page's ``.py``, ``.ipynb`` and ``.zip`` carry the catalog's prose, comments
and docstrings and keep the English code token for token, so they print
what the English prints (no tutorial reads a docstring); each figure
on a Chinese page is the recorded figure drawn again with the catalog's
texts in the region's face of the Noto CJK collection. What the build must
refuse (a translated comment or docstring that changes the code) is tried on
a copy of the mini site (tests/roots/mini-site), in the build and in
``make check``.
"""

import ast
import collections
import io
import itertools
import json
import re
import subprocess
import sys
import warnings
import zipfile
from types import SimpleNamespace
from xml.etree import ElementTree
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, SoupStrainer
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from conftest import FIGURE_EXAMPLE, outside_env, run_module
from languages import TRANSLATIONS
from extensions.localized_examples import (
    PICKLE,
    TEXTS,
    _is_current,
    _made,
    draw,
    figure_family,
    installed_font,
    figure_texts,
    load_figure,
    notebook_code,
    translated_figure,
)
from catalogs.tutorial_text import code_tokens, localized_code, texts
from babel.messages.catalog import Message
from catalogs.po import is_translated, messages, msgstr_line, read, write

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(path.stem for path in (ROOT / "examples").glob("plot_*.py"))
GALLERY = ROOT / "docs" / "auto_examples"
CJK = re.compile(r"[\u4e00-\u9fff]")


def catalog(lang, example):
    return read(ROOT / "locale" / lang / "LC_MESSAGES" / "auto_examples" / f"{example}.po")


def translator(lang, example):
    """``translate(text)`` as the build's: the catalog's translation, or the text itself."""
    entries = {m.id: m.string for m in messages(catalog(lang, example)) if is_translated(m)}
    return lambda text: entries.get(text, text)


def page(site, lang, example):
    path = site / lang / "auto_examples" / f"{example}.html"
    return path, BeautifulSoup(path.read_text("utf-8"), "html.parser")


def download(site, lang, example, suffix):
    """The file the page's download button hands out."""
    path = site / lang / "auto_examples" / f"{example}.html"
    links = BeautifulSoup(path.read_text("utf-8"), "html.parser", parse_only=SoupStrainer("a"))
    for link in links.select("a.download"):
        if link["href"].endswith(example + suffix):
            return (path.parent / link["href"]).resolve()
    raise AssertionError(f"no {suffix} download on {path}")


def squeezed(text):
    """*text* without whitespace, comment marks and backquotes: a wrapped translation reads as one."""
    return re.sub(r"[\s#`]+", "", text)


def comments_and_docstrings(code):
    return squeezed(" ".join(text for _, text, _ in texts(code)))


# -- Downloads ------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_a_chinese_download_is_the_translated_tutorial_with_the_english_code(site, lang, example):
    english = (ROOT / "examples" / f"{example}.py").read_text("utf-8")
    script = download(site, lang, example, ".py").read_text("utf-8")
    # The prose: the page's title, as the reader sees it, opens the script.
    _, soup = page(site, lang, example)
    title = soup.select_one("article h1").get_text().rstrip("¶#").strip()
    assert CJK.search(title) and squeezed(title) in squeezed(script[:2000]), title
    # Every translated comment and docstring of its code cells is in the script's.
    translate, found = translator(lang, example), comments_and_docstrings(script)
    cells = split_code_and_text_blocks(str(ROOT / "examples" / f"{example}.py"))[1]
    originals = [text for cell in cells if cell.type == "code" for _, text, _ in texts(cell.content)]
    translated = [translate(text) for text in originals if translate(text) != text]
    # (A tutorial may have no comment in its code: then its code is the English's.)
    assert translated or not originals, "no comment or docstring of this tutorial is translated"
    assert [t for t in translated if squeezed(t) not in found] == []
    # The program is the English one, and Python reads it as a program.
    assert code_tokens(script) == code_tokens(english)
    assert script != english
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an invalid escape: a warning today, an error later
        compile(script, f"{lang}/{example}.py", "exec")
    # The notebook: the same prose, code cells identical in tokens to the English notebook's.
    notebook = json.loads(download(site, lang, example, ".ipynb").read_text("utf-8"))
    english_notebook = json.loads(download(site, "en", example, ".ipynb").read_text("utf-8"))
    cells = [code_tokens(cell) for cell in notebook_code(notebook)]
    assert cells == [code_tokens(cell) for cell in notebook_code(english_notebook)]
    prose = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert squeezed(title) in squeezed(prose)
    code = comments_and_docstrings("\n".join(notebook_code(notebook)))
    assert [t for t in translated if squeezed(t) not in code] == []
    # The zip holds the same two files.
    with zipfile.ZipFile(download(site, lang, example, ".zip")) as archive:
        assert archive.read(f"{example}.py").decode() == script
        assert json.loads(archive.read(f"{example}.ipynb")) == notebook


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_english_downloads_are_the_english_sources(site, example):
    source = (ROOT / "examples" / f"{example}.py").read_bytes()
    assert download(site, "en", example, ".py").read_bytes() == source
    notebook = json.loads(download(site, "en", example, ".ipynb").read_text("utf-8"))
    assert not CJK.search(json.dumps(notebook, ensure_ascii=False))


LABELS = sorted(
    {
        label
        for path in (ROOT / "examples").glob("plot_*.py")
        for label in re.findall(r"^# \.\. _([\w-]+):", path.read_text("utf-8"), re.M)
    }
)


def markdown_words(markdown):
    """What Jupyter shows of *markdown*, parsed as CommonMark with tables: (text, inline code)."""
    from markdown_it import MarkdownIt

    shown, code = [], []
    for block in MarkdownIt("commonmark").enable("table").parse(markdown):
        for token in block.children or ():
            (code if token.type == "code_inline" else shown).append(token.content)
    return shown, code


@pytest.mark.parametrize("lang", ["en", *TRANSLATIONS])
def test_a_notebook_shows_no_rest(site, lang):
    """Sphinx-Gallery's converter leaves reST in a notebook's Markdown; Jupyter would show it."""
    assert LABELS, "the tutorials have no reference label"
    for example in EXAMPLES:
        notebook = json.loads(download(site, lang, example, ".ipynb").read_text("utf-8"))
        for number, cell in enumerate(notebook["cells"], 1):
            if cell["cell_type"] != "markdown":
                continue
            where = f"{lang} {example}.ipynb, cell {number}"
            shown, code = markdown_words("".join(cell["source"]))
            text = "\n".join(shown)
            assert "\\" not in text, (where, text)  # reST's escaped space shows as a backslash
            assert not re.search(r"^\.\. |:[a-z]+:`", text, re.M), (where, text)  # directives, roles
            # A :ref: turned into code: its label, alone or after its title in <>.
            refs = [c for c in code if c in LABELS or re.search(r"<[\w-]+>$", c)]
            assert refs == [], (where, refs)
        with zipfile.ZipFile(download(site, lang, example, ".zip")) as archive:
            assert json.loads(archive.read(f"{example}.ipynb")) == notebook


def test_a_notebook_reference_reads_as_its_title():
    """:func:`plain_markdown` gives a reference the words its page shows: its title, else the
    title of the section its label leads to; code and fenced blocks are left as they are."""
    from extensions.localized_examples import plain_markdown

    cell = (
        ".. rst-class:: collapsed\n\n## How\n\nSee `the first page <first>`, `second` and "
        "``a\\ b``; a ``DTensor``\\ s and *x*\\ y. `unknown`\n\n```bash\necho a\\ b\n```\n"
    )
    notebook = {
        "cells": [{"cell_type": "markdown", "source": cell}, {"cell_type": "code", "source": "a\\ b"}]
    }
    plain = plain_markdown(notebook, {"first": "First", "second": "The second page"})
    assert plain["cells"][0]["source"] == (
        "## How\n\nSee the first page, The second page and ``a\\ b``; a ``DTensor``s and *x*y. "
        "`unknown`\n\n```bash\necho a\\ b\n```\n"
    )
    assert plain["cells"][1] == notebook["cells"][1]
    table = (
        ".. list-table::\n   :header-rows: 1\n   :stub-columns: 1\n\n   * - Aspect\n     - ``a|b``\n"
        "   * - Speed\n     - Slower: the threads\n       compete\n\nAfter.\n"
    )
    plain = plain_markdown({"cells": [{"cell_type": "markdown", "source": table}]}, {})
    assert plain["cells"][0]["source"] == (
        "| Aspect | ``a\\|b`` |\n| --- | --- |\n| **Speed** | Slower: the threads compete |\n\nAfter.\n"
    )


def test_no_tutorial_reads_its_docstrings_so_a_download_with_the_english_tokens_prints_the_same():
    """A Chinese download differs from the English only in comments and docstrings (the test above).

    Comments never run; a docstring reaches the output only through ``__doc__``
    (or ``help``/``inspect``), which no tutorial uses: with the English's
    tokens and compiling cleanly, a download prints what the English prints,
    and the suite need not run each example again per language (the English
    runs in the build, as notebooks in test_validity.py and under torchrun in
    test_training.py).
    """
    for example in EXAMPLES:
        code = (ROOT / "examples" / f"{example}.py").read_text("utf-8")
        names = {
            node.attr if isinstance(node, ast.Attribute) else node.id
            for node in ast.walk(ast.parse(code))
            if isinstance(node, (ast.Attribute, ast.Name))
        }
        assert not names & {"__doc__", "help", "getdoc", "inspect"}, example


# -- Downloads laid out as the English: wrapped, no word split, docstrings' paragraphs ---------

HAN = "\u3400-\u9fff"


def prose_runs(script):
    """Runs of consecutive lines of Chinese prose in *script*: comment blocks, docstrings."""
    runs, run = [], []
    for line in script.splitlines() + [""]:
        words = re.sub(r"^\s*(# ?)?", "", line)
        if CJK.search(words) and not re.match(r"^\s*[^#\s].*#", line):  # not a comment after code
            run.append(words)
        else:
            runs += [run] if len(run) > 1 else []
            run = []
    return runs


def breaks_between_chinese(script):
    """Each (line, next line) of a prose run where a line ends and the next begins in Chinese."""
    return [
        (before, after)
        for run in prose_runs(script)
        for before, after in zip(run, run[1:])
        if re.search(f"[{HAN}]$", before) and re.match(f"[{HAN}]", after)
    ]


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_a_chinese_download_is_wrapped_as_the_english_without_splitting_a_word(site, lang, example):
    from catalogs.tutorial_text import _CJK, _chinese_words, _width

    script = download(site, lang, example, ".py").read_text("utf-8")
    english = set((ROOT / "examples" / f"{example}.py").read_text("utf-8").splitlines())
    # Every translated line fits in 79 columns, as the English prose does; a
    # longer one is a single piece (inline code), a comment after code, or a
    # docstring the English writes on one line, no wider than the English's.
    widest = max(map(_width, english))
    for line in script.splitlines():
        if line not in english and _width(line) > 79:
            one_line = re.fullmatch(r'\s*r?""".+"""', line) and _width(line) <= widest
            assert one_line or re.match(r"^\s*[^#\s].*#", line) or " " not in line.strip().lstrip("# "), line
    # No Chinese word is cut by a line break: where a line ends and the next
    # begins in Chinese, jieba (with the glossary's terms) cuts the joined text there.
    for before, after in breaks_between_chinese(script):
        left = re.search(f"[{_CJK}]+$", before)[0]
        right = re.match(f"[{_CJK}]+", after)[0]
        words = _chinese_words(left + right)
        assert len(left) in set(itertools.accumulate(map(len, words))), (before, after)


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_the_downloads_do_break_lines_between_chinese_words(site, lang):
    """The test above has breaks to check (a short tutorial may have none; not all)."""
    scripts = [download(site, lang, example, ".py").read_text("utf-8") for example in EXAMPLES]
    assert any(map(breaks_between_chinese, scripts)), "no line break between two Chinese words"


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_a_docstrings_summary_line_stays_apart_in_every_language(site, lang):
    """Each paragraph of a docstring is a message: the translation keeps the blank lines."""
    checked = 0
    for example in EXAMPLES:
        script = download(site, lang, example, ".py").read_text("utf-8")
        english = (ROOT / "examples" / f"{example}.py").read_text("utf-8")
        count = lambda code: collections.Counter(  # noqa: E731
            span for kind, _, span in texts(code) if kind == "docstring"
        )
        english_counts = sorted(n for n in count(english).values() if n > 1)
        assert sorted(n for n in count(script).values() if n > 1) == english_counts, example
        for kind, text, _ in texts(script):
            if kind == "docstring" and CJK.search(text):
                checked += 1
    assert checked


def test_wrapping_keeps_markup_glossary_terms_and_punctuation_whole():
    from catalogs.tutorial_text import _wrap

    text = (
        "每个进程都加入同一个进程组，然后把 ``torch.distributed.init_process_group(backend)``"
        "\\ 的结果（一个进程组）交给 :ref:`DDP 教程 <ddp-tutorial>`\\ 中的模型。"
    )
    for width in range(20, 90, 3):
        lines = _wrap(text, width)
        assert re.sub(r"\s", "", "".join(lines)) == re.sub(r"\s", "", text)  # nothing lost
        for line, following in zip(lines, lines[1:]):
            assert not following.startswith(("，", "。", "）")) and not line.endswith("（")
            assert not line.endswith("\\") and not line.endswith("\\ ")
            assert line.count("``") % 2 == 0 and line.count("`") % 2 == 0
            assert not (line.endswith("进程") and following.startswith("组"))
    # Traditional text is cut as its Simplified form would be: 後端 stays one word.
    from catalogs.tutorial_text import _chinese_words

    assert _chinese_words("然後使用後端") == ["然後", "使用", "後端"]
    assert _chinese_words("行程群組") == ["行程群組"]  # a glossary term


# -- Comments and docstrings: what the build and make check refuse -----------------------------

CELL = '''def line():
    """Return the line it prints."""
    return "one line"  # the same on every run


# what it prints
print(line())
'''


def test_a_translation_with_backslashes_stays_its_words():
    """reST's escaped space (``\\ ``) before Chinese text: the literal becomes raw."""
    docstring = "回傳\\ ``line``\\ 印出的那一行。"
    code, refused = localized_code(CELL, lambda text: docstring if text.startswith("Return") else text)
    assert refused == [] and f'r"""{docstring}"""' in code
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(code, "cell", "exec"), namespace)
    assert namespace["line"].__doc__ == docstring


def test_a_comment_or_docstring_translation_may_change_only_its_words():
    cases = {
        "the same on every run": "每次執行都一樣",
        "Return the line it prints.": "回傳它印出的那一行。",
        "what it prints": "它印出的內容",
    }
    code, refused = localized_code(CELL, lambda text: cases.get(text, text))
    assert refused == [] and "# 每次執行都一樣" in code and '"""回傳它印出的那一行。"""' in code
    assert code_tokens(code) == code_tokens(CELL)
    for english, bad in [
        ("the same on every run", "每次都一樣\nprint('another program')"),
        ("what it prints", "它印出的\n內容"),
        ("Return the line it prints.", '回傳那一行。""" + """'),
    ]:
        code, refused = localized_code(CELL, lambda text, e=english, b=bad: b if text == e else text)
        assert refused == [english] and code == CELL
    # Together: the good one is used, each bad one refused, in the code's order.
    together = {
        **cases,
        "the same on every run": "每次都一樣\nprint('another program')",
        "Return the line it prints.": '回傳那一行。""" + """',
    }
    code, refused = localized_code(CELL, lambda text: together.get(text, text))
    assert refused == ["Return the line it prints.", "the same on every run"]
    assert "# 它印出的內容" in code and code_tokens(code) == code_tokens(CELL)


# Translations the build and make check must refuse, each of one comment or docstring.
REFUSED = {
    "the same on every run": "每次都一樣\nimport os",  # code after a line break
    "what it prints": "它印出的\n內容",  # a bare line break
    "Return the line it prints.": '回傳那一行。""" + """',  # a quote that ends the docstring
}


@pytest.fixture
def refusing_project(mini_site):
    """The mini site with a code cell of comments and a docstring, their translations refused."""
    example = mini_site / "examples" / "plot_01_tiny.py"
    example.write_text(example.read_text("utf-8") + "\n\n" + CELL, "utf-8")
    po = mini_site / "locale" / "zh_TW" / "LC_MESSAGES" / "auto_examples" / "plot_01_tiny.po"
    entries = read(po)
    for msgid, msgstr in REFUSED.items():
        entries[msgid] = Message(msgid, msgstr, locations=[("examples/plot_01_tiny.py", None)])
    write(entries, po)
    return mini_site, {f"{po}:{msgstr_line(read(po)[msgid])}": msgid for msgid in REFUSED}


def test_the_build_refuses_a_translation_that_changes_the_code(refusing_project):
    """Sphinx itself, as make html runs it (which then publishes nothing: test_translator_loop)."""
    project, locations = refusing_project
    args = ["-b", "html", "-q", "-c", "conf", "-D", "language=zh_TW", "docs", "_build/out"]
    result = run_module(project, "sphinx", *args)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    for location in locations:
        assert f"{location}: ERROR: translation refused: it changes the code" in output, output


def test_make_check_refuses_a_translation_that_changes_the_code(refusing_project):
    project, locations = refusing_project
    result = subprocess.run(
        ["make", "check", "LANGUAGES=zh_TW"], cwd=project, capture_output=True, text=True, env=outside_env()
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    for location in locations:  # as the build names it, or relative to the project
        line = location.rsplit(":", 1)[1]
        where = rf"(?:{re.escape(str(project))}/)?locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_tiny.po"
        assert re.search(rf"^{where}:{line}: \[code\] .*changes the code", output, re.M), output


# -- Figures ------------------------------------------------------------------------------------

REGION = {"zh_CN": "SC", "zh_TW": "TC"}
SVG = "{http://www.w3.org/2000/svg}"


def test_each_language_draws_with_its_regional_face_of_the_collection():
    from matplotlib.ft2font import FT2Font

    for lang, region in REGION.items():
        family = figure_family(lang)
        assert family == f"Noto Sans CJK {region}"
        path = installed_font.__wrapped__(family)
        assert str(path).endswith(".ttc") and path.face_index != 0  # not the collection's first (JP)
        assert FT2Font(path, face_index=path.face_index).family_name == family


def test_a_font_installed_after_matplotlib_listed_the_fonts_is_found(monkeypatch):
    """Matplotlib's cached list of fonts, made before fonts-noto-cjk was installed, lacks it."""
    from matplotlib.font_manager import fontManager

    family = figure_family("zh_TW")
    noto = {font.fname for font in fontManager.ttflist if font.name.startswith("Noto Sans CJK")}
    before = [font for font in fontManager.ttflist if font.fname not in noto]
    monkeypatch.setattr(fontManager, "ttflist", before)
    fontManager._findfont_cached.cache_clear()  # the lookups made with the whole list
    path = installed_font.__wrapped__(family)
    assert path is not None and path.face_index != 0, path
    assert installed_font.__wrapped__("Noto Sans CJK of no region") is None
    fontManager._findfont_cached.cache_clear()  # the lookups made with the shortened list


def drawn_svg(pickled, translate, family):
    """The <text> elements of the figure drawn as SVG with its text kept as text."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none"}):
        out = io.StringIO()
        draw(pickled, translate, family, out, format="svg")
    svg = ElementTree.fromstring(out.getvalue())
    return [("".join(text.itertext()), text.get("style", "")) for text in svg.iter(f"{SVG}text")]


def pixels(png):
    from PIL import Image

    with Image.open(png) as image:
        return image.convert("RGB").tobytes()


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_a_figure_on_a_chinese_page_carries_the_catalogs_labels_in_its_face(site, tmp_path, lang, example):
    path, soup = page(site, lang, example)
    shown = [img["src"] for img in soup.select("article img") if "sphx_glr_" in img["src"]]
    if not shown:
        pytest.skip("this tutorial draws no figure")
    translate, family = translator(lang, example), figure_family(lang)
    other = figure_family("zh_TW" if lang == "zh_CN" else "zh_CN")
    # A label translated as itself ("rank 0": the glossary keeps rank) is not English left.
    translated = {m.id for m in messages(catalog(lang, example)) if is_translated(m) and m.string != m.id}
    for src in shown:
        png = (path.parent / src).resolve()
        pickled = GALLERY / "images" / (png.name + PICKLE)
        english = GALLERY / "images" / png.name
        assert pixels(png) != pixels(english)
        # What the page shows is the recorded figure drawn with the catalog, in this face...
        draw(pickled, translate, family, tmp_path / "same.png")
        draw(pickled, translate, other, tmp_path / "other.png")
        assert pixels(png) == pixels(tmp_path / "same.png")
        assert pixels(png) != pixels(tmp_path / "other.png")  # ...not the other region's
        # ...and drawn as text, that is Chinese words in that face, no English one left.
        drawn = drawn_svg(pickled, translate, family)
        chinese = [(text, style) for text, style in drawn if CJK.search(text)]
        assert chinese, drawn
        assert all(f"font-family: '{family}'" in style for _, style in chinese), chinese
        assert [text for text, _ in drawn if text in translated] == []


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_english_figures_are_the_ones_the_example_drew(site, example):
    path, soup = page(site, "en", example)
    for src in [img["src"] for img in soup.select("article img") if "sphx_glr_" in img["src"]]:
        png = (path.parent / src).resolve()
        assert png.read_bytes() == (GALLERY / "images" / png.name).read_bytes()


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_figure_is_kept_once_with_the_texts_it_shows(site, example):
    """make gettext reads a figure's texts from what the example's run kept beside it."""
    path, soup = page(site, "en", example)
    shown = {Path(img["src"]).name for img in soup.select("article img") if "sphx_glr_" in img["src"]}
    kept = {p.name[: -len(PICKLE)] for p in (GALLERY / "images").glob(f"sphx_glr_{example}_*{PICKLE}")}
    assert kept == shown  # the run opened no figure it did not show
    for name in shown:
        texts = json.loads((GALLERY / "images" / (name + TEXTS)).read_text("utf-8"))
        figure = load_figure(GALLERY / "images" / (name + PICKLE))
        sys.modules["matplotlib.pyplot"].close(figure)  # unpickled, pyplot holds it: let it go
        assert texts and texts == figure_texts(figure)


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_the_gallerys_thumbnails_are_made_from_the_translated_figures(site, lang):
    from PIL import Image

    def thumbnails(lang):
        index = site / lang / "auto_examples" / "index.html"
        soup = BeautifulSoup(index.read_text("utf-8"), "html.parser")
        return [(index.parent / img["src"]).resolve() for img in soup.select(".sphx-glr-thumbcontainer img")]

    english, translated = thumbnails("en"), thumbnails(lang)
    assert len(translated) == len(english) == len(EXAMPLES)
    for en_png, png in zip(english, translated, strict=True):
        stem = re.fullmatch(r"sphx_glr_(.+)_thumb\.png", png.name)[1]
        drawn = (GALLERY / "images" / f"sphx_glr_{stem}_001.png{PICKLE}").is_file()
        assert png.name == en_png.name
        assert (pixels(png) != pixels(en_png)) == drawn  # a picture of its own stays as it is
        with Image.open(png) as image, Image.open(en_png) as en_image:
            assert image.size == en_image.size


def test_a_thumbnail_follows_its_figure_when_the_example_runs_again(mini_site):
    """The gallery's index is read again when a figure it shows a thumbnail of changes.

    Its own source does not change when an example runs again, so Sphinx would
    keep the thumbnail drawn from the figure before; the offline copies, read
    from scratch, would then draw another (tests/conftest.py, ``offline``).
    """
    example = mini_site / "examples" / "plot_02_figure.py"
    thumb = mini_site / "docs/auto_examples/images/thumb/zh_CN/sphx_glr_plot_02_figure_thumb.png"

    def build(*command):
        result = run_module(mini_site, *command)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    def gallery():
        folder = mini_site / "docs" / "auto_examples"
        return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}

    example.write_text(FIGURE_EXAMPLE.format(height=1), "utf-8")
    build("build.site", "html", "zh_CN")
    first = thumb.read_bytes()
    example.write_text(FIGURE_EXAMPLE.format(height=-1), "utf-8")  # the line goes down instead
    build("build.site", "html", "zh_CN")
    assert pixels(thumb) != pixels(io.BytesIO(first)), "the thumbnail shows the figure before"
    after_html = gallery()
    build("build.offline", "epub", "zh_CN")
    assert gallery() == after_html, "the EPUB build drew a thumbnail the HTML build did not"


def test_a_made_figure_or_download_is_reused_only_while_it_holds_what_was_made(tmp_path):
    """A translated figure is drawn again unless its inputs' key and its own bytes are unchanged.

    The live preview and ``make html`` keep their doctrees apart but write the
    same figures under docs/: a file another build wrote since is made again.
    """
    build = SimpleNamespace(doctreedir=str(tmp_path / "doctrees"))  # what the functions read of Sphinx's app
    figure = tmp_path / "images" / "zh_CN" / "sphx_glr_plot_01_001.png"
    figure.parent.mkdir(parents=True)
    assert not _is_current(build, figure, "key")  # never made
    figure.write_bytes(b"drawn from key")
    _made(build, figure, "key")
    assert _is_current(build, figure, "key")
    assert not _is_current(build, figure, "another key")  # a catalog or the pickle changed
    figure.write_bytes(b"drawn by the preview from another catalog")
    assert not _is_current(build, figure, "key")
    figure.unlink()
    assert not _is_current(build, figure, "key")


def texts_cut_off(figure):
    """The texts of *figure*, drawn, that reach past its edges (a long title): what the PNG cuts."""
    from matplotlib.text import Text

    figure.canvas.draw()
    renderer, edge = figure.canvas.get_renderer(), figure.bbox
    ticks = {
        label
        for ax in figure.axes
        for axis in (ax.xaxis, ax.yaxis)
        for tick in axis.majorTicks + axis.minorTicks
        for label in (tick.label1, tick.label2)
    }
    shown = set()  # the labels of the ticks in view: Matplotlib draws no other
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.majorTicks + axis.minorTicks:
                if low - 1e-9 * (high - low) <= tick.get_loc() <= high + 1e-9 * (high - low):
                    shown.update((tick.label1, tick.label2))
    cut = []
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or (text in ticks and text not in shown):
            continue
        box = text.get_window_extent(renderer)
        if (
            box.x0 < edge.x0 - 0.5
            or box.x1 > edge.x1 + 0.5
            or box.y0 < edge.y0 - 0.5
            or box.y1 > edge.y1 + 0.5
        ):
            cut.append(text.get_text())
    return cut


@pytest.mark.parametrize("lang", ["en", *TRANSLATIONS])
@pytest.mark.parametrize("example", EXAMPLES)
def test_no_text_of_a_figure_is_cut_off_at_its_edges(site, lang, example):
    import matplotlib.pyplot as plt

    kept = sorted((GALLERY / "images").glob(f"sphx_glr_{example}_*{PICKLE}"))
    if not kept:
        pytest.skip("this tutorial draws no figure")
    for pickled in kept:
        if lang == "en":
            figure = load_figure(pickled)
        else:
            figure = translated_figure(pickled, translator(lang, example), figure_family(lang))
        assert texts_cut_off(figure) == [], pickled.name
        plt.close(figure)
