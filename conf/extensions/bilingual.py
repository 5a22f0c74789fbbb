"""Keep the English original, hidden, under each translated paragraph and heading.

In a translated HTML build: :class:`KeepEnglish` (before Sphinx's ``Locale``
transform) copies each translatable paragraph and section title, marks the
outdated ones ``fuzzy`` and counts the page's entries for translation_notice.py
(catalogs/merge.py: fuzzy entries are not compiled, only the .po knows);
:class:`DropNeedlessCopies` drops the copies of what stayed English;
:class:`MarkEnglish` marks what is still English ``lang="en"`` for screen
readers. ``bilingual.js`` shows the copies when the reader ticks the toggle.
"""

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

from languages import SOURCE
from extensions.compiled_catalogs import catalog_folder
from catalogs.po import Catalog
from catalogs.merge import current_pot_dir, page_counts, template_of

from .offline_copies import is_offline

COPY = "bilingual-en"
# The document attribute that counts its messages: total, fuzzy, missing (no translation).
STATE = "translation_state"
# Paragraphs that are only a download button: a second, English button helps nobody.
SKIP_INSIDE = ("sphx-glr-download",)


def is_translated_build(config):
    """Return True when the build translates (any language but the source's)."""
    return bool(config.language) and config.language != SOURCE.sphinx


def catalog_path(env, docname):
    """The catalog (.po) of *docname* in the build's language."""
    domain = docname_to_domain(docname, env.config.gettext_compact)
    return catalog_folder(env.srcdir, env.config) / env.config.language / "LC_MESSAGES" / f"{domain}.po"


def page_states(env, docname, document):
    """The Counts of *docname* (catalogs/merge.py), noting its catalog and template as its
    dependencies; without a current template, the page's own messages are its English."""
    domain = docname_to_domain(docname, env.config.gettext_compact)
    po = catalog_path(env, docname)
    env.note_dependency(str(po))
    pot = template_of(domain, current_pot_dir(env.srcdir))
    if pot is not None:
        env.note_dependency(str(pot))
    else:
        pot = Catalog()
        for _, message in extract_messages(document):
            pot.add(message)
    return page_counts(po, pot, env.config.language)


def english_copy(node):
    """Return a hidden-by-default English paragraph copied from *node*."""
    copy = nodes.paragraph(node.rawsource, "", *(child.deepcopy() for child in node.children))
    copy.source, copy.line = node.source, node.line
    for element in copy.findall(nodes.Element):
        element["ids"] = []  # the original keeps the anchors
    for target in list(copy.findall(nodes.target)):
        target.parent.replace(target, target.children)  # and defines the targets
    copy["translatable"] = False  # Locale must leave it English
    # "language-en" becomes lang="en"; "no-search" keeps it out of the search index.
    copy["classes"] = [COPY, "language-en", "no-search"]
    if isinstance(node, nodes.title):
        copy["classes"].append("bilingual-title")
    return copy


class KeepEnglish(SphinxTransform):
    """Insert an English copy after each translatable paragraph and section title."""

    default_priority = 15  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs):
        if not is_translated_build(self.config):
            return
        counts = page_states(self.env, self.env.current_document.docname, self.document)
        fuzzy = {msg for msg, state in counts.states.items() if state == "outdated"}
        messages = list(extract_messages(self.document))
        self.document[STATE] = {
            "total": counts.total,
            "fuzzy": counts.outdated,
            "missing": counts.untranslated,
        }
        if is_offline(self.env):
            return  # a PDF or EPUB has no toggle to hide the copies behind
        for node, msg in messages:
            is_title = isinstance(node, nodes.title) and isinstance(node.parent, nodes.section)
            if not (is_title or isinstance(node, nodes.paragraph)):
                continue
            if any(c.startswith(SKIP_INSIDE) for a in _ancestors(node) for c in a["classes"]):
                continue
            if msg in fuzzy:
                node["classes"].append("fuzzy")
            node.parent.insert(node.parent.index(node) + 1, english_copy(node))


class DropNeedlessCopies(SphinxTransform):
    """Remove copies whose original was not translated; keep lists compact."""

    default_priority = 22  # after Locale has set node["translated"]

    def apply(self, **kwargs):
        if not is_translated_build(self.config):
            return
        lists = set()
        for copy in list(self.document.findall(_is_copy)):
            original = copy.parent[copy.parent.index(copy) - 1]
            if not original.get("translated") or original.astext() == copy.astext():
                copy.parent.remove(copy)
            elif isinstance(copy.parent, nodes.list_item):
                lists.add(copy.parent.parent)
        for lst in lists:
            # A copy must not turn a compact list into a spaced-out one.
            if all(sum(1 for c in item if not _is_copy(c)) <= 1 for item in lst):
                lst["classes"].append("compact")


class MarkEnglish(SphinxTransform):
    """Mark the text of paragraphs and titles left untranslated as English."""

    default_priority = 960  # after Sphinx's AddTranslationClasses (950) set "untranslated"

    def apply(self, **kwargs):
        if not is_translated_build(self.config):
            return
        for node in list(self.document.findall(nodes.TextElement)):
            if "untranslated" not in node["classes"] or isinstance(node, nodes.FixedTextElement):
                continue
            # Wrap the text, not the element: the badge that site.css adds after
            # it ("not yet translated") is in the page's language.
            text = node.children[:]
            node.clear()
            node += nodes.inline("", "", *text, classes=["language-en"])


def _is_copy(node):
    return isinstance(node, nodes.paragraph) and COPY in node["classes"]


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def setup(app):
    """Register the transforms."""
    app.setup_extension("extensions.compiled_catalogs")  # catalog_sources
    app.add_transform(KeepEnglish)
    app.add_transform(DropNeedlessCopies)
    app.add_transform(MarkEnglish)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
