"""Describe each figure, and each gallery card, in the reader's language.

Sphinx-Gallery takes a figure's alt text from its Matplotlib title or the
script's name, and writes the gallery index's cards as raw HTML copied from the
English script: gettext reaches neither. Here, in every language, a figure's
alt text is the paragraph that introduces it (the text cell before the code
that drew it), and each card gets the example page's title, first paragraph
(its tooltip) and thumbnail figure's alt text; the index is written again
whenever an example page is read again. :func:`visit_figure` escapes the alt
text Sphinx-Gallery writes unescaped.
"""

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_gallery.directives import depart_imgsg_html, imgsgnode, visit_imgsg_html
from sphinx_gallery.py_source_parser import extract_file_config

from extensions.localized_examples import FRAME

CARD = 'class="sphx-glr-thumbcontainer"'
TOOLTIP = re.compile(r' tooltip="[^"]*"')
TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">).*?(</div>)', re.S)
COPY = "bilingual-en"  # bilingual.py's hidden English copies
# Sphinx-Gallery's files for what this site does not use (tags, Binder, pandas
# tables, rendered HTML output: capture_repr is empty): 10 kB off every page's
# first load.
UNUSED_ASSETS = {
    "sg-tags.js",
    "sg_gallery-binder.css",
    "sg_gallery-dataframe.css",
    "sg_gallery-rendered-html.css",
}


def _text(node):
    return " ".join(node.astext().split())


def _is_prose(node):
    return isinstance(node, nodes.paragraph) and COPY not in node["classes"]


def introduction(figure):
    """The text of the paragraphs just before the code that drew *figure*, or None."""
    if FRAME in figure.parent["classes"]:  # localized_examples.scrape's frame
        figure = figure.parent
    siblings = figure.parent.children[: figure.parent.index(figure)]
    found, passed_code = [], False
    for node in reversed(siblings):
        if isinstance(node, (nodes.comment, nodes.paragraph)) and not _is_prose(node):
            continue
        if not passed_code:
            passed_code = isinstance(node, nodes.literal_block)
        elif _is_prose(node):
            found.insert(0, _text(node))
        elif found or not isinstance(node, nodes.comment):
            break
    return " ".join(found) or None


def describe_figures(app, doctree):
    """Give every Sphinx-Gallery figure of a page its introduction as alt text."""
    for figure in doctree.findall(imgsgnode):
        text = introduction(figure)
        if text:
            figure["alt"] = text


def thumbnail_alt(doctree, source):
    """The alt text of the figure that the thumbnail of *source*'s page shows ('' if none)."""
    number = 1
    if source.is_file():
        config = extract_file_config(source.read_text("utf-8"))
        if "thumbnail_number" not in config and "thumbnail_path" in config:
            return ""  # a picture of its own, not a figure of the page
        number = config.get("thumbnail_number", 1)
    figures = list(doctree.findall(imgsgnode))
    try:
        return figures[number - 1 if number > 0 else number]["alt"]
    except IndexError:
        return ""


class TranslateCards(SphinxPostTransform):
    """Fill each gallery card from the translated page it links to."""

    default_priority = 5  # before ReferencesResolver (10) and OnlyNodeTransform (50)
    builders = ("html", "dirhtml", "singlehtml", "epub")

    def run(self, **kwargs):
        examples = Path(self.env.srcdir, self.config.examples_folder)
        for card in list(self.document.findall(nodes.raw)):
            if CARD not in card.astext():
                continue
            xref = card.next_node(addnodes.pending_xref, siblings=True)
            title_div = xref and xref.next_node(
                lambda n: isinstance(n, nodes.raw) and "thumbnail-title" in n.astext(),
                ascend=True,
            )
            docname = xref and xref["reftarget"].lstrip("/")
            if not docname or docname not in self.env.all_docs or title_div is None:
                continue
            page = self.env.get_doctree(docname)
            section = page.next_node(nodes.section)
            intro = next((p for p in section.children if _is_prose(p)), None) if section else None
            title = _text(self.env.titles[docname])
            # HTML has no tooltip attribute (Nu checker, EPUBCheck): data-tooltip, shown by site.css.
            tooltip = f' data-tooltip="{html.escape(_text(intro))}"' if intro is not None else ""
            _replace(card, TOOLTIP, lambda m: tooltip)
            _replace(title_div, TITLE, lambda m: m[1] + html.escape(title) + m[2])
            source = examples / (Path(docname).name + ".py")
            for image in card.next_node(addnodes.only, siblings=True).findall(nodes.image):
                image["alt"] = thumbnail_alt(page, source)


def _replace(raw, pattern, replace):
    """Substitute the first match of *pattern* in a raw node's HTML by ``replace(match)``."""
    text = pattern.sub(replace, raw.astext(), count=1)
    raw.children = []
    raw += nodes.Text(text)


def remember_read(app, env, docnames):
    """Note which pages are about to be read again."""
    env.dp_cards_read = set(docnames)


def rewrite_index(app, env):
    """Rewrite the gallery index when one of its examples was read again."""
    read = getattr(env, "dp_cards_read", set())
    env.dp_cards_read = set()
    gallery = app.config.gallery_folder
    index = f"{gallery}/index"
    examples = {doc for doc in read if doc.startswith(gallery + "/") and doc != index}
    return [index] if examples and index in env.found_docs else []


def visit_figure(translator, node):
    """Sphinx-Gallery's HTML for a figure, with its alt text escaped for the attribute."""
    if node["srcset"] is None:  # it hands the node to Sphinx's visit_image, which escapes
        return visit_imgsg_html(translator, node)
    alt = node["alt"]
    node["alt"] = html.escape(alt)
    try:
        visit_imgsg_html(translator, node)
    finally:
        node["alt"] = alt


def drop_unused_assets(app, pagename, templatename, context, doctree):
    """Leave Sphinx-Gallery's UNUSED_ASSETS out of every page."""
    for key in ("script_files", "css_files"):
        context[key] = [f for f in context.get(key, []) if Path(f.filename).name not in UNUSED_ASSETS]


def setup(app):
    """Register the handlers, the post-transform and the escaping figure writer."""
    app.add_node(imgsgnode, override=True, html=(visit_figure, depart_imgsg_html))
    app.connect("doctree-read", describe_figures)
    app.connect("env-before-read-docs", remember_read)
    app.connect("env-get-updated", rewrite_index)
    app.add_post_transform(TranslateCards)
    app.connect("html-page-context", drop_unused_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
