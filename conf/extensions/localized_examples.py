"""A Chinese reader's tutorial is Chinese end to end: code comments, figures, downloads.

From the English script (``examples/plot_*.py``) and the page's catalog:

* **comments and docstrings** of the code cells are messages of the page (a
  gettext build extracts them, located in the page's reST); a translation may
  change only their words: one that changes any other token of the code
  (catalogs/tutorial_text.localized_code) is refused, naming its catalog and line;
* **figures** are drawn again in each language from the figure the example
  made, kept pickled beside its PNG by :func:`scrape` (the example is not run
  again), every text a message of the page, in the region's Noto CJK face;
* **downloads**: the script with its prose, comments and docstrings translated,
  the notebook Sphinx-Gallery's converter makes of it, and their zip, each
  checked token for token against the English (and each Markdown cell by make
  check's notebook rule) in every translated HTML build;
* **notebooks**, in every language, keep nothing only reST reads, which
  Sphinx-Gallery's converter leaves in their Markdown (:func:`plain_markdown`).
"""

import contextlib
import functools
import hashlib
import io
import json
import os
import pickle
import re
import tempfile

import matplotlib

matplotlib.use("agg")  # as Sphinx-Gallery sets it, before pyplot is imported
import matplotlib.pyplot as plt
from docutils import nodes
from matplotlib import font_manager
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator, Formatter
from PIL import Image
from sphinx.locale import init
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx_gallery import py_source_parser as parser
from sphinx_gallery.directives import imgsgnode
from sphinx_gallery.notebook import jupyter_notebook
from sphinx_gallery.py_source_parser import extract_file_config, split_code_and_text_blocks
from sphinx_gallery.scrapers import matplotlib_scraper
from sphinx_gallery.utils import scale_image

from languages import by_sphinx_code
from extensions.bilingual import catalog_path, is_translated_build
from extensions.offline_copies import CJK_REGION
from extensions.example_guard import example_of
from extensions.recordings import cells_of
from extensions.reproducible_files import zipped
from extensions.translation_safety import catalog_entry, refusals_of
from site_layout import machinery_version, write_if_changed
from gate.parse import rst_document
from gate.safety import notebook_additions
from catalogs.tutorial_text import (
    code_tokens,
    localized_code,
    localized_prose,
    raw_prefix,
    same_tokens,
    texts,
)

# -- Figures ---------------------------------------------------------------------------

PICKLE = ".figure.pickle"  # beside each figure's PNG: the figure itself, to draw again
TEXTS = ".texts.json"  # and its texts (figure_texts), for make gettext, which then draws nothing
FRAME = "figure-frame"  # the class of the box each figure scrolls in (site.css, accessibility.js)


# 12 pt at Matplotlib's 100 dpi is 16.7 px, the body's 16 px: a figure is shown at its own
# size (on a phone it scrolls sideways in its frame), so its words are as large as the page's.
FIGURE_TEXT_PT = 12


def readable_figures(gallery_conf, fname, when):
    """Sphinx-Gallery reset hook: each example draws its text at FIGURE_TEXT_PT (after "matplotlib")."""
    matplotlib.rcParams["font.size"] = FIGURE_TEXT_PT


def scrape(block, block_vars, gallery_conf, **kwargs):
    """Sphinx-Gallery's Matplotlib scraper, keeping each figure it saves (pickled) beside it, in
    a ``figure-frame`` container: the box that scrolls it sideways on a narrow page (site.css)."""
    figures = [plt.figure(number) for number in plt.get_fignums()]
    kept = [pickle.dumps(figure) for figure in figures]
    paths = block_vars["image_path_iterator"].paths
    before = len(paths)
    rst = matplotlib_scraper(block, block_vars, gallery_conf, **kwargs)
    for path, figure, pickled in zip(paths[before:], figures, kept, strict=False):
        with open(path + PICKLE, "wb") as out:
            out.write(pickled)
        # Its texts as drawn: unpickling it here would open it again in pyplot.
        with open(path + TEXTS, "w", encoding="utf-8") as out:
            json.dump(figure_texts(figure), out, ensure_ascii=False)
    if not rst.strip():
        return rst
    return (
        f"\n\n.. container:: {FRAME}\n\n"
        + "".join(f"   {line}" if line.strip() else line for line in rst.strip("\n").splitlines(True))
        + "\n\n"
    )


def figure_texts(figure):
    """The texts a reader reads on *figure*: titles, labels, tick labels, legends, notes."""
    found = []
    for text in _drawn_texts(figure):
        # Words, not names and numbers alone ("GPU 3", "0.5"): those stay as drawn.
        if re.search("[a-z]{2}", text) and text not in found:
            found.append(text)
    return found


def _drawn_texts(figure):
    ticks = [
        label
        for ax in figure.axes
        for axis in (ax.xaxis, ax.yaxis)
        for label in axis.get_ticklabels(which="both")
    ]
    return [artist.get_text() for artist in [*figure.findobj(Text), *ticks]]


def _translated_ticks(axis, translate, family):
    """Make *axis* translate the labels its formatters give (Matplotlib makes them again at
    each draw), in the font *family*."""

    class Translated(Formatter):
        def __init__(self, inner):
            self.inner = inner

        def __call__(self, x, pos=None):
            return translate(self.inner(x, pos))

        def format_ticks(self, values):
            return [translate(label) for label in self.inner.format_ticks(values)]

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def get_offset(self):
            return self.inner.get_offset()

    axis.set_major_formatter(Translated(axis.get_major_formatter()))
    axis.set_minor_formatter(Translated(axis.get_minor_formatter()))
    for label in axis.get_ticklabels(which="both"):  # new ticks copy the first one's font
        label.set_fontfamily([family, "DejaVu Sans"])


def load_figure(pickled):
    """The figure kept in the file *pickled* (by :func:`scrape`)."""
    with open(pickled, "rb") as file:
        return pickle.load(file)


_MATH = re.compile(r"(?<!\\)\$(.*?)(?<!\\)\$")


def as_drawn(english, translation):
    """*translation* of a figure's *english* text, as Matplotlib must get it to draw its words.

    Matplotlib reads text between two ``$`` as math: a ``$`` that the English
    does not use is a dollar sign and is escaped (``\\$``); where the English
    has math, a translation must keep exactly its math, or the English is drawn.
    """
    if translation == english:
        return english
    if not _MATH.search(english):
        return re.sub(r"(?<!\\)\$", r"\\$", translation)
    outside = _MATH.sub("", translation)
    if _MATH.findall(translation) != _MATH.findall(english) or re.search(r"(?<!\\)\$", outside):
        return english
    return translation


def keep_english_ticks(figure):
    """Fix every axis's ticks where the English *figure* has them: a translated text takes other
    room, and Matplotlib would choose other ticks for the axes left (0.0, 0.5, ... for 0 ... 4).
    With the same locations, each formatter writes the same numbers."""
    figure.draw_without_rendering()  # the English's layout, as its PNG was saved
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(FixedLocator(axis.get_majorticklocs()))
            axis.set_minor_locator(FixedLocator(axis.get_minorticklocs()))


def draw(pickled, translate, family, target, **savefig):
    """Draw the figure *pickled* again with its texts translated (:func:`translated_figure`)."""
    figure = translated_figure(pickled, translate, family)
    figure.savefig(target, **savefig)
    plt.close(figure)  # unpickled, pyplot holds it


def translated_figure(pickled, translate, family):
    """The figure *pickled* with the English's ticks and its texts translated (:func:`as_drawn`),
    in the font *family*: a face of a collection (``Noto Sans CJK TC`` is face 3 of
    ``NotoSansCJK-Regular.ttc``), which Matplotlib's font manager lists by name."""
    installed_font(family)  # a font installed since Matplotlib listed the fonts is listed
    figure = load_figure(pickled)
    keep_english_ticks(figure)

    def drawn(text):
        # The catalog has the text as Sphinx extracts it, its line breaks spaces.
        message = text.replace("\n", " ").strip()
        translation = translate(message)
        return as_drawn(text, text if translation == message else translation)

    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            _translated_ticks(axis, drawn, family)
    for artist in figure.findobj(Text):
        text = artist.get_text()
        if text:
            artist.set_text(drawn(text))
            artist.set_fontfamily([family, "DejaVu Sans"])  # Latin and symbols from the second
    return figure


# -- In the build ------------------------------------------------------------------------------


def _inputs_key(app, docname, *files):
    """A digest of what a page's translated figures and downloads are made from: conf/ and
    the pins, the language, the page's compiled catalog and *files* (the example, a figure).

    Each made file keeps its key in the doctrees (:func:`_is_current`): after a
    save in the live preview only that page's catalog changed.
    """
    domain = docname_to_domain(docname, app.config.gettext_compact)
    key = hashlib.sha256(f"{machinery_version()}\0{app.config.language}".encode())
    for folder in app.config.locale_dirs:
        mo = os.path.join(app.srcdir, folder, app.config.language, "LC_MESSAGES", domain + ".mo")
        key.update(b"\0" + (open(mo, "rb").read() if os.path.isfile(mo) else b""))
    for path in files:
        key.update(b"\0" + open(path, "rb").read())
    return key.hexdigest()


def _kept(app, path):
    """Where the key that *path* was made from is kept, with a digest of what it holds."""
    name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()
    return os.path.join(app.doctreedir, "made-from", name)


def _stamp(path, key):
    # What the file holds too: the other of make html and the live preview may have written it since.
    return f"{key} {hashlib.sha256(open(path, 'rb').read()).hexdigest()}"


def _is_current(app, path, key):
    """Whether *path* holds what this build made from *key*."""
    try:
        return open(_kept(app, path), encoding="utf-8").read() == _stamp(path, key)
    except OSError:
        return False


def _made(app, path, key):
    """Note that *path* was made from *key*."""
    write_if_changed(_kept(app, path), _stamp(path, key).encode())


def _translator(app, docname):
    """``translate(text)`` with the page's catalog in the build's language."""
    domain = docname_to_domain(docname, app.config.gettext_compact)
    dirs = [os.path.join(app.srcdir, folder) for folder in app.config.locale_dirs]
    catalog, _ = init(dirs, app.config.language, domain)
    return lambda text: catalog.gettext(text)


def _message(text, source, line):
    """A node the gettext builder extracts *text* from, located at *source*:*line*."""
    node = nodes.paragraph(text, text)
    node.source, node.line = str(source), line
    return node


def add_messages(app, doctree):
    """In a gettext build, make each comment, docstring and figure text of a page a message,
    after the code block or figure it belongs to: the catalog lists them in the page's order."""
    docname = app.env.current_document.docname
    if app.builder.name != "gettext" or example_of(app, docname) is None:
        return
    # Located in the page's generated reST, as its paragraphs are: make update-po
    # names the example it is made from.
    source = doctree["source"]

    for code, _ in cells_of(doctree):
        notes = [_message(text, source, 1) for _, text, _ in texts(code.astext())]
        code.parent.insert(code.parent.index(code) + 1, nodes.container("", *notes))
    for figure in list(doctree.findall(_figure_nodes)):
        pickled = _pickle_of(app, figure)
        if pickled:
            kept = pickled[: -len(PICKLE)] + TEXTS
            if os.path.isfile(kept):
                with open(kept, encoding="utf-8") as file:
                    words = json.load(file)
            else:  # a gallery executed before the texts were kept
                words = figure_texts(load_figure(pickled))
            figure.parent.insert(
                figure.parent.index(figure) + 1, nodes.container("", *(_message(w, source, 1) for w in words))
            )


def _figure_nodes(node):
    return isinstance(node, (imgsgnode, nodes.image))


def _pickle_of(app, figure):
    """The kept figure behind a Sphinx-Gallery figure node, or None."""
    uri = figure.get("uri", "")
    path = os.path.join(app.srcdir, uri.lstrip("/")) + PICKLE
    return path if "sphx_glr_" in uri and os.path.isfile(path) else None


def localize(app, doctree):
    """In a translated build, translate a gallery page's comments, docstrings and figures;
    the gallery's thumbnails follow the figures."""
    docname = app.env.current_document.docname
    if not is_translated_build(app.config):
        return
    _localize_thumbnails(app, doctree)
    example = example_of(app, docname)
    if example is None:
        return
    translate, refused = _translator(app, docname), []
    for code, _ in cells_of(doctree):
        english = code.astext()
        text, rejected = localized_code(english, translate)
        refused += rejected
        if text != english:
            code.children = [nodes.Text(text)]
            code.rawsource = text
    for figure in list(doctree.findall(_figure_nodes)):
        pickled = _pickle_of(app, figure)
        if pickled:
            figure["uri"] = _localized_figure(app, figure["uri"], pickled, docname)
            if figure.get("srcset"):
                figure["srcset"] = figure["uri"]
    _note_refusals(app, docname, refused, refusals_of(app.env).setdefault(docname, []))


def _note_refusals(app, docname, refused, found):
    """Add to *found* the translations refused, at their catalog's line: an English text (one
    that would change the code), or ``[what the translation added, why]`` (a notebook's cell)."""
    domain = docname_to_domain(docname, app.config.gettext_compact)
    for text in refused:
        if isinstance(text, str):
            where = catalog_entry(app.srcdir, app.config, domain, text)
            why = (
                "it changes the code, not only the words of a comment, docstring or text cell"
                " (a line break in a comment, a quote that ends a docstring); the English is kept"
            )
        else:
            added, why = text
            where = catalog_entry(app.srcdir, app.config, domain, None, holding=added)
            why += "; the notebook keeps the English cell"
        found.append((where or docname, why))


def figure_family(language):
    """The Noto CJK family (a face of the .ttc collection) with *language*'s regional glyphs."""
    return f"Noto Sans CJK {CJK_REGION.get(by_sphinx_code(language).script, 'SC')}"


@functools.cache
def installed_font(family):
    """The file of the font *family* as Matplotlib finds it, or None if none is installed.

    Matplotlib lists the system's fonts once and keeps the list in its cache; a
    font installed since (fonts-noto-cjk after a first build) is added here, else
    Matplotlib would draw every Chinese character of the figure as an empty box.
    """
    fonts = font_manager.fontManager
    found = _listed_font(fonts, family)
    if found is None:
        listed = {font.fname for font in fonts.ttflist}
        for path in [path for path in font_manager.findSystemFonts() if path not in listed]:
            with contextlib.suppress(
                OSError, RuntimeError, ValueError
            ):  # unreadable: Matplotlib skips it too
                fonts.addfont(path)
        found = _listed_font(fonts, family)
    return found


def _listed_font(fonts, family):
    """The file of *family* in the font manager *fonts*' list, or None."""
    try:
        return fonts.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    except ValueError:
        return None


@functools.cache
def _warn_missing_font(family, docname):
    """Say, once per page, that *family* is not installed (see installed_font)."""
    logging.getLogger(__name__).warning(
        f"the translated figures need the font {family}, which is not installed, and would show"
        " every Chinese character as an empty box; the English figures stay: apt-get install"
        " fonts-noto-cjk (Debian, Ubuntu), or install Noto Sans CJK from"
        " https://github.com/notofonts/noto-cjk",
        location=docname,
    )


def _localized_figure(app, uri, pickled, docname):
    """Draw the figure again in the language of page *docname*, under images/<language>/, unless
    its inputs are unchanged (:func:`_inputs_key`); return its URI."""
    folder, name = uri.rsplit("/", 1)
    localized = f"{folder}/{app.config.language}/{name}"
    path = os.path.join(app.srcdir, localized.lstrip("/"))
    key = _inputs_key(app, docname, pickled)
    if not _is_current(app, path, key):
        family = figure_family(app.config.language)
        if installed_font(family) is None:
            _warn_missing_font(family, docname)
            return uri
        drawn = io.BytesIO()
        draw(pickled, _translator(app, docname), family, drawn, format="png")
        write_if_changed(path, _compact_png(drawn))
        _made(app, path, key)
    return localized


def _compact_png(png):
    """The PNG in the file object *png*, the same pixels in fewer bytes: RGB where it is opaque,
    Pillow's optimizing encoder (the tutorial's first load has a budget: tests/test_browser.py)."""
    png.seek(0)
    with Image.open(png) as image:
        if image.mode == "RGBA" and image.getextrema()[3] == (255, 255):
            image = image.convert("RGB")
        out = io.BytesIO()
        image.save(out, "PNG", optimize=True)
    return out.getvalue()


_THUMBNAIL = re.compile(r"^(?P<folder>.*)/thumb/sphx_glr_(?P<name>.+)_thumb\.png$")


def _localize_thumbnails(app, doctree):
    """Point each gallery thumbnail made from a figure at one made from the translated figure."""
    for image in doctree.findall(nodes.image):
        match = _THUMBNAIL.match(image.get("uri", ""))
        example = match and example_of(app, f"{app.config.gallery_folder}/{match['name']}")
        if not example:
            continue
        config = extract_file_config(example.read_text("utf-8"))
        if "thumbnail_path" in config and "thumbnail_number" not in config:
            continue  # a picture of its own, not a figure
        number = config.get("thumbnail_number", 1)
        figure = f"{match['folder']}/sphx_glr_{match['name']}_{number:03d}.png"
        pickled = os.path.join(app.srcdir, figure.lstrip("/")) + PICKLE
        if number < 1 or not os.path.isfile(pickled):
            continue
        example_doc = f"{app.config.gallery_folder}/{match['name']}"
        # The page holding the thumbnail is read again when the figure or the
        # example's catalog changes, not only when its own source does.
        for dependency in (pickled, catalog_path(app.env, example_doc)):
            app.env.note_dependency(str(dependency))
        drawn = os.path.join(app.srcdir, _localized_figure(app, figure, pickled, example_doc).lstrip("/"))
        folder, name = image["uri"].rsplit("/", 1)
        image["uri"] = f"{folder}/{app.config.language}/{name}"
        thumbnail = os.path.join(app.srcdir, image["uri"].lstrip("/"))
        key = _inputs_key(app, example_doc, drawn)
        if _is_current(app, thumbnail, key):
            continue
        size = app.config.sphinx_gallery_conf.get("thumbnail_size", (400, 280))
        with tempfile.TemporaryDirectory() as scratch:
            scaled = os.path.join(scratch, name)
            scale_image(drawn, scaled, *size)
            data = open(scaled, "rb").read()
        write_if_changed(thumbnail, data)
        _made(app, thumbnail, key)


# -- Downloads ------------------------------------------------------------------------------


def localized_script(path, translate, parse, wrap=True):
    """(The example at *path* with its prose, comments and docstrings translated, [English texts refused]).

    The module docstring and each ``# %%`` text cell are translated message by
    message and, with *wrap*, wrapped at 79 columns as the English is; code cells
    keep every token. A translation that would change the script's tokens is not used.
    """
    source = open(path, encoding="utf-8").read()
    lines = source.splitlines(keepends=True)
    _, blocks = split_code_and_text_blocks(str(path))
    ends = [block.lineno for block in blocks[1:]] + [len(lines) + 1]
    pieces, refused = [], []
    for index, (block, end) in enumerate(zip(blocks, ends, strict=True)):
        chunk = "".join(lines[block.lineno - 1 : end - 1])
        if block.type == "code":
            chunk, rejected = _localized_cell(chunk, translate)
            refused += rejected
        elif index == 0:  # the module docstring: the title and the introduction
            match = re.match(r'(\s*[rRuU]?"""\n?)(.*?)(\n?""")', chunk, re.S)
            if match:
                english = code_tokens(chunk)

                def same(body, match=match, english=english):
                    return same_tokens(match[1] + body + match[3] + chunk[match.end() :], english)

                body, rejected = localized_prose(match[2], translate, parse, same, width=79 if wrap else None)
                refused += rejected
                opening = re.sub(r'[rRuU]?(?=""")', lambda m: raw_prefix(m[0], body), match[1])
                chunk = opening + body + match[3] + chunk[match.end() :]
        else:  # "# " comment lines, then what follows the cell (blank lines) as it is
            cell = chunk.splitlines(keepends=True)
            count = next((i for i, line in enumerate(cell) if not line.startswith("#")), len(cell))
            text = "".join(re.sub(r"^# ?", "", line) for line in cell[:count])
            body, rejected = localized_prose(text, translate, parse, width=77 if wrap else None)
            refused += rejected
            chunk = "".join(f"# {line}".rstrip() + "\n" for line in body.splitlines())
            chunk += "".join(cell[count:])
        pieces.append(chunk)
    script = "".join(pieces)
    if not same_tokens(script, code_tokens(source)):  # never hand out another program
        return source, refused + ["(the script as a whole)"]
    return script, refused


@functools.lru_cache(maxsize=128)
def _localized_cell(code, translate):
    """:func:`localized_code`, once per cell and translator: the script, then its notebook."""
    code, refused = localized_code(code, translate)
    return code, tuple(refused)


def notebook_code(notebook):
    """The code cells of a notebook (a dict, as Sphinx-Gallery makes it), as text."""
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def localized_downloads(example, translate, parse, gallery_conf):
    """Return (script, notebook, [English texts refused]) of *example* in a translation.

    The notebook is made by Sphinx-Gallery's converter from the script with its
    prose unwrapped (Chromium shows a line break between Chinese characters as a
    space). Where its code cells' tokens differ from the English's, the English is handed out.
    """
    script, refused = localized_script(example, translate, parse)
    english = _notebook(example, gallery_conf)
    with tempfile.TemporaryDirectory() as scratch:  # Sphinx-Gallery parses files, not text
        path = os.path.join(scratch, os.path.basename(example))
        with open(path, "w", encoding="utf-8") as out:
            out.write(localized_script(example, translate, parse, wrap=False)[0])
        notebook = _notebook(path, gallery_conf, os.path.dirname(example))
    cells = [code_tokens(cell) for cell in notebook_code(english)]
    if [code_tokens(cell) for cell in notebook_code(notebook)] != cells:
        source = open(example, encoding="utf-8").read()
        return source, english, refused + ["(the notebook's code cells)"]
    return script, notebook, refused + notebook_refusals(english, notebook)


def notebook_refusals(english, notebook):
    """Give back its English to each Markdown cell of *notebook* that adds a link, an image or
    HTML to its English cell (gate/safety.notebook_additions); return ``[[what, why]]``."""
    cells = [
        [cell for cell in book["cells"] if cell["cell_type"] == "markdown"] for book in (english, notebook)
    ]
    refused = []
    for ours, theirs in zip(*cells, strict=True):  # the same script's cells
        added = notebook_additions("".join(ours["source"]), "".join(theirs["source"]))
        if added:
            theirs["source"] = ours["source"]
            refused += [[at, why] for why, at in added]
    return refused


# What Sphinx-Gallery's reST-to-Markdown converter leaves that only reST reads.
CODE = re.compile(r"(```.*?```|``.+?``)", re.DOTALL)  # fenced blocks and code spans: kept as they are
REFERENCE = re.compile(r"`([^`<>]+?)\s*<([^`<>]+)>`|`([^`\s]+)`")  # a :ref: with its role taken away
CLASS = re.compile(r"^[ \t]*\.\. rst-class::[^\n]*\n\n?", re.MULTILINE)
TABLE = re.compile(r"^\.\. list-table::[^\n]*\n((?:[ \t]+[^\n]*\n|\n)*)", re.MULTILINE)


def markdown_table(match):
    """A ``list-table`` directive as a Markdown table (its stub column in bold)."""
    options, rows = dict(re.findall(r"^\s*:([\w-]+):\s*(.*)$", match[1], re.MULTILINE)), []
    for line in match[1].splitlines():
        item = re.match(r"\s*(\* )?- (.*)", line)
        if item:
            rows += [[]] if item[1] else []
            rows[-1].append(item[2].strip())
        elif rows and line.strip():  # a cell's next line
            rows[-1][-1] += " " + line.strip()
    stub, heads = int(options.get("stub-columns", 0)), int(options.get("header-rows", 0))
    cells = [
        [f"**{c}**" if i < stub and r >= heads else c for i, c in enumerate(row)]
        for r, row in enumerate(rows)
    ]
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    lines.insert(max(heads, 1), "|" + " --- |" * len(rows[0]))
    if not heads:
        lines.insert(0, "|" + "  |" * len(rows[0]))
    return "\n".join(lines) + "\n\n"


def plain_markdown(notebook, titles):
    """Return *notebook* with its Markdown cells freed of the reST Sphinx-Gallery leaves there.

    The escaped space (``\\ ``, which reST shows as nothing and Markdown shows as
    a backslash), ``.. rst-class::`` lines, a ``list-table`` (made a Markdown
    table), and a ``:ref:``, which the converter
    turns into code: a reference becomes the words the page shows, its own
    title or, given a label only, the title of the section it leads to
    (*titles*: label to title, in the build's language).
    """

    def words(match):
        title, label, bare = match.groups()
        return title if label in titles else titles.get(bare, match[0])

    def plain(text):
        text = TABLE.sub(markdown_table, CLASS.sub("", text))
        parts = CODE.split(text)
        parts[::2] = [REFERENCE.sub(words, part).replace("\\ ", "") for part in parts[::2]]
        return "".join(parts)

    cells = [
        {**cell, "source": plain("".join(cell["source"]))} if cell["cell_type"] == "markdown" else cell
        for cell in notebook["cells"]
    ]
    return {**notebook, "cells": cells}


def _notebook(path, gallery_conf, folder=None):
    """The notebook of the script at *path*, as Sphinx-Gallery makes the English one (its blocks
    cleaned as its ``_clean_script_blocks`` does)."""
    blocks = [
        parser.Block(label, parser.remove_ignore_blocks(content), line)
        for label, content, line in parser.split_code_and_text_blocks(str(path))[1]
    ]
    if gallery_conf.get("remove_config_comments"):
        blocks = [
            parser.Block(label, parser.remove_config_comments(content), line)
            for label, content, line in blocks
        ]
    if blocks[-1].content.isspace():
        blocks = blocks[:-1]
    return jupyter_notebook(blocks, gallery_conf, folder or os.path.dirname(path))


# The builders that hand out downloads (the EPUB's format is "html" too, but it has none).
WEB_BUILDERS = ("html", "dirhtml", "singlehtml")


def make_downloads(app, env):
    """In an HTML build, make every example's notebook in plain Markdown; in a translated one,
    make and check every example's downloads, once the pages are read (Sphinx's roles need a
    document, and the references' titles are known); a refusal fails the build with the pages'."""
    app.dp_downloads = {}
    if app.builder.name not in WEB_BUILDERS:
        return []
    titles = {label: title for label, (_, _, title) in env.get_domain("std").labels.items() if title}
    parse, gallery = rst_document, app.config.gallery_folder
    for docname in sorted(env.found_docs):
        example = example_of(app, docname) if docname.startswith(gallery + "/") else None
        if example is None:
            continue
        if not is_translated_build(app.config):
            # The script and the notebook Sphinx-Gallery wrote beside the page.
            with (
                open(example, encoding="utf-8") as source,
                open(os.path.join(app.srcdir, docname + ".ipynb"), encoding="utf-8") as made,
            ):
                script, notebook = source.read(), json.load(made)
            app.dp_downloads[docname] = (script, plain_markdown(notebook, titles))
            continue
        script, notebook, refused = _remembered_downloads(app, docname, example, parse)
        app.dp_downloads[docname] = (script, plain_markdown(notebook, titles))
        found = refusals_of(env)[f"{docname} (downloads)"] = []
        _note_refusals(app, docname, refused, found)
    return []


def _remembered_downloads(app, docname, example, parse):
    """:func:`localized_downloads` of *example*, kept while its inputs stay (:func:`_inputs_key`)."""
    key = _inputs_key(app, docname, example)
    kept = os.path.join(app.doctreedir, "downloads", docname.replace("/", "_") + ".json")
    if _is_current(app, kept, key):
        with open(kept, encoding="utf-8") as file:
            return json.load(file)
    made = localized_downloads(example, _translator(app, docname), parse, app.config.sphinx_gallery_conf)
    write_if_changed(kept, json.dumps(made).encode())
    _made(app, kept, key)
    return made


def write_downloads(app, exception):
    """In an HTML build, write each example's downloads over Sphinx-Gallery's: its notebook (and
    so its zip) in every language, its script too in a translation."""
    if exception is not None or app.builder.name not in WEB_BUILDERS:
        return
    made = getattr(app, "dp_downloads", {})
    downloads = {str(source): str(dest) for source, (_, dest) in app.env.dlfiles.items()}
    folder = os.path.join(app.outdir, "_downloads")
    for source, dest in downloads.items():
        docname = os.path.splitext(source)[0]
        if not source.endswith(".py") or docname not in made:
            continue  # not an example's
        if not os.path.isfile(os.path.join(folder, dest)):
            continue  # a copy without downloads
        script, notebook = made[docname]
        notebook = json.dumps(notebook, indent=2, ensure_ascii=False)
        stem = os.path.basename(docname)
        written = {".py": script.encode(), ".ipynb": notebook.encode()}
        written[".zip"] = zipped([(stem + suffix, data) for suffix, data in written.items()])
        for suffix, data in written.items():
            if docname + suffix in downloads:
                write_if_changed(os.path.join(folder, downloads[docname + suffix]), data)


def setup(app):
    """Register the handlers."""
    app.connect("doctree-read", add_messages)
    app.connect("doctree-read", localize, priority=400)  # before the image collector
    app.connect("env-updated", make_downloads, priority=400)  # before the refusals' report
    app.connect("build-finished", write_downloads)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
