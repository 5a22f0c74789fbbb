"""The offline copies, PDF (LaTeX through xelatex) and EPUB, and the site's links to them.

For the ``latex`` and ``epub`` builders: the language's file name, title and
CJK fonts (Noto CJK, SC glyphs for Simplified, TC for Traditional Chinese), and
in the PDF the site's "Out:" label; :func:`is_offline` tells the transforms. For
the HTML builder: ``offline_downloads``, where this language's copies are.

A local build links the copies ``make pdf`` and ``make epub`` made, placed in
``_offline/`` beside the pages (:func:`place_copies`), so that they open
wherever the pages are served, over HTTP or file://; a copy not built is named
with the command that builds it, not linked. Read the Docs links its own.
"""

import datetime
import os
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.util import texescape

from languages import by_sphinx_code
from site_layout import OFFLINE_FOLDER, OFFLINE_FORMATS, linked_copies, offline_copies

BUILDERS = ("latex", "epub")
# Noto CJK's regional subsets: the same character drawn the way its readers expect.
CJK_REGION = {"Hans": "SC", "Hant": "TC"}
CJK_FONTS = r"""
\setCJKmainfont{Noto Serif CJK %(region)s}
\setCJKsansfont{Noto Sans CJK %(region)s}
\setCJKmonofont{Noto Sans Mono CJK %(region)s}
"""
GALLERY_BADGES = ("_static/binder_badge_logo.svg", "_static/jupyterlite_badge_logo.svg")
# Sphinx-Gallery's download buttons, and its note "Go to the end to download ...".
WEB_ONLY = ("sphx-glr-footer", "sphx-glr-download-link-note")


def is_offline(env):
    """True in a build of an offline copy (PDF or EPUB); transforms pass their ``env``."""
    return getattr(env, "offline_copy", False)


def note_builder(app):
    """Record on the environment, where transforms can see it, whether this build is offline.

    An EPUB 3 must have a version; the site has none, so the EPUB's is its build date.
    Its navigation page gets a title in its language.
    """
    app.env.offline_copy = app.builder.name in BUILDERS
    if app.builder.name == "epub":
        if not app.config.version:
            app.config.version = datetime.date.today().isoformat()
        # Sphinx names the EPUB's navigation page in English whatever the language.
        app.builder.guide_titles = {**app.builder.guide_titles, "toc": _("Table of Contents")}


def file_stem(config):
    """The offline copies' file name without extension: ``<offline_basename>-<language>``."""
    return f"{config.offline_basename}-{config.language}"


def configure(app, config):
    """Set the language-dependent LaTeX and EPUB values."""
    lang = by_sphinx_code(config.language)
    stem = file_stem(config)
    # Only the pages of the root's toctrees: its own text is about the website
    # (language links, download buttons). translated_title() sets the title.
    config.latex_documents = [(config.root_doc, stem + ".tex", config.project, config.author, "howto", True)]
    # English pages hold Chinese too (the translation status names the languages).
    region = CJK_REGION.get(lang.script, "SC")
    # Sphinx titles the table of contents after the first toctree's caption
    # ("Tutorials"), though it lists every page; babel and polyglossia are off
    # so that a plain \renewcommand after Sphinx's own takes effect.
    contents = texescape.escape(_("Table of Contents"), config.latex_engine)
    config.latex_elements = {
        **config.latex_elements,
        "babel": "",
        "polyglossia": "",
        "fontenc": r"\usepackage{xeCJK}",  # loads fontspec
        "preamble": config.latex_elements.get("preamble", "")
        + CJK_FONTS % {"region": region}
        + "\\renewcommand{\\contentsname}{%s}\n" % contents,
    }
    config.epub_basename = stem
    config.epub_language = lang.html  # a BCP 47 tag (zh-CN), not Sphinx's zh_CN
    # E-readers tell books apart by this: the three languages must differ. The
    # NCX (epub_uid) must name the book as the OPF does (EPUBCheck NCX-001).
    config.epub_identifier = config.epub_uid = stem
    # Sphinx-Gallery's Binder and JupyterLite badges, which the book never
    # shows: their SVG declares external DTD entities, which EPUB 3 forbids.
    config.epub_exclude_files = [*config.epub_exclude_files, *GALLERY_BADGES]
    # Which copies the pages link: a change rewrites every page (an "html" value).
    config.offline_copies_built = linked_copies(config.language)


def translated_title(app, env):
    """Name the PDF and the EPUB after the root page's title, in their language."""
    title = env.titles.get(env.config.root_doc)
    if title is None:
        return
    if app.builder.name == "epub":
        app.config.epub_title = title.astext()
    elif app.builder.name == "latex":  # read when writing starts, after this event
        escaped = texescape.escape(title.astext(), app.config.latex_engine)
        app.config.latex_documents = [
            (doc, target, escaped, *rest) for doc, target, _old_title, *rest in app.config.latex_documents
        ]


def label_outputs(app, doctree, docname):
    """In the PDF, put the site's "Out:" label above each executed output.

    The site and the EPUB draw it with CSS (site.css), which LaTeX does not read.
    """
    if app.builder.name != "latex":
        return
    for block in list(doctree.findall(nodes.literal_block)):
        if "sphx-glr-script-out" in block["classes"]:
            label = nodes.paragraph("", "", nodes.emphasis(text=_("Out:")))
            block.parent.insert(block.parent.index(block), label)


def drop_download_notes(app, doctree, docname):
    """In the EPUB, drop the gallery's download buttons and the note pointing to them.

    Sphinx-Gallery marks them ``only:: html``, which the EPUB builder also
    renders, but it packs no scripts or notebooks for them to download.
    """
    if app.builder.name != "epub":
        return
    for node in list(doctree.findall(nodes.Element)):
        if any(c in node["classes"] for c in WEB_ONLY) and node.parent is not None:
            node.parent.remove(node)


def place_copies(lang, pages):
    """Make *pages*/_offline/ hold exactly *lang*'s built offline copies (hard links where possible)."""
    folder = Path(pages) / OFFLINE_FOLDER
    copies = offline_copies(lang)
    for old in folder.iterdir() if folder.is_dir() else ():
        if old.name not in {path.name for path in copies.values()}:
            old.unlink()
    for path in copies.values():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{path.name}.partial"
        partial.unlink(missing_ok=True)
        try:
            os.link(path, partial)
        except OSError:  # another file system
            shutil.copy2(path, partial)
        os.replace(partial, folder / path.name)


def add_download_links(app, pagename, templatename, context, doctree):
    """Give the templates this language's offline copies as ``(label, href, command)``.

    *href* is None for a copy not built: the sidebar names *command*, which builds it.
    """
    if app.builder.name != "html":
        return
    if os.environ.get("READTHEDOCS_VERSION_TYPE") == "external":
        return  # a pull-request preview builds no offline copies: no dead links
    lang, version = by_sphinx_code(app.config.language), os.environ.get("READTHEDOCS_VERSION")
    if version:  # where Read the Docs serves a version's downloads
        links = {fmt: f"/_/downloads/{lang.rtd}/{version}/{fmt}/" for fmt in OFFLINE_FORMATS}
    else:
        up = "../" * pagename.count("/")
        # The copies configure() found once for the build (a change rewrites every page).
        built = {name.rpartition(".")[2]: name for name in app.config.offline_copies_built.split(",") if name}
        links = {
            fmt: f"{up}{OFFLINE_FOLDER}/{built[fmt]}" if fmt in built else None for fmt in OFFLINE_FORMATS
        }
    context["offline_downloads"] = [(fmt.upper(), links[fmt], f"make {fmt}") for fmt in OFFLINE_FORMATS]


def publish_copies(app, exception):
    """Place the local build's offline copies beside its pages (not on Read the Docs)."""
    if exception is None and app.builder.name == "html" and not os.environ.get("READTHEDOCS"):
        place_copies(app.config.language, app.outdir)


def setup(app):
    """Register the file name setting and the handlers."""
    app.add_config_value("offline_basename", "site", "env", types=[str])
    app.add_config_value("offline_copies_built", "", "html", types=[str])  # set by configure()
    app.connect("config-inited", configure)
    app.connect("builder-inited", note_builder, priority=400)  # before EPUB checks its values
    app.connect("env-updated", translated_title)
    app.connect("doctree-resolved", label_outputs)
    app.connect("doctree-resolved", drop_download_notes)
    app.connect("html-page-context", add_download_links)
    app.connect("build-finished", publish_copies)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
