"""A translation adds words to a page, never HTML, scripts, unsafe links or directives.

In a translated build, :class:`RememberEnglish` (just before Sphinx's
``Locale`` transform) notes what each translatable node holds beyond words and
where its links lead, and turns file insertion off; every source parser is
wrapped (:func:`guarded`) so that a translation parsing to more than a paragraph
or a title becomes text; :class:`RefuseAdditions` (just after ``Locale``) asks
the judge make check asks too (gate/safety.py) and shows a refused
translation as plain text, naming its catalog and line. sphinx.po reaches the
pages through templates and other projects' scripts that do not escape it:
compiled_catalogs.py compiles no interface translation the judge refuses, and
:func:`escape_templates` gives the templates a gettext that judges and escapes
again where each string is written. Every refusal fails the build.
:class:`AtTheCatalog` reports Sphinx's warnings about a translation's
references (a mistyped target) at its catalog line, not the generated page's.
"""

import ast
import logging as pylogging
import os

from docutils import nodes
from docutils.utils import get_source_line
from markupsafe import Markup
from sphinx import addnodes
from sphinx.locale import get_translator
from sphinx.transforms import SphinxTransform
from sphinx.transforms.i18n import parse_noqa
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import LITERAL_TYPE_NODES, extract_messages

from extensions.bilingual import is_translated_build
from extensions.compiled_catalogs import catalog_folder, interface_glossary
from gate import safety
from catalogs.repository import ReviewError
from catalogs.po import CatalogError, is_translated, messages, msgstr_line, read
from gate.words import has_markup, interface_verdict, markup_problems

logger = logging.getLogger(__name__)

# Their translation changes only an attribute the HTML writer escapes (a meta
# tag's content, a toctree's caption).
ATTRIBUTE_ONLY = (nodes.meta, addnodes.translatable)
# What Locale expects a msgstr to parse to; anything else (raw, a directive's
# output) is refused. A translated title parses to a section; a literal block
# or an image (gettext_additional_targets) to itself.
PARSED_AS = (nodes.paragraph, nodes.section, nodes.literal_block, nodes.image)


def catalog_entry(srcdir, config, domain, msgid, holding=None, added=False):
    """``catalog:line`` of *msgid*'s translation in *domain*, or None.

    With *holding* instead of a msgid: of the first translation that holds
    that text (with *added*, one whose English does not), at the line that does.
    """
    po = catalog_folder(srcdir, config) / config.language / "LC_MESSAGES" / f"{domain}.po"
    try:
        catalog = read(po)
    except (CatalogError, OSError):  # none, or not a catalog: compiled_catalogs.py reported it
        return None
    if holding is None:
        found = [catalog.get(msgid)]
    else:
        found = [
            m
            for m in messages(catalog)
            if isinstance(m.string, str) and holding in m.string and not (added and holding in m.id)
        ]
    for message in found:
        if message is not None and is_translated(message):
            return f"{po}:{msgstr_line(message, holding or '')}"
    return None


# Where Locale parses a msgstr: the source of its nodes ends so (sphinx.transforms.i18n).
TRANSLATED = ":<translated>"
KEEP_TARGET = "keep the English's target and translate only the title before it"


class AtTheCatalog(pylogging.Filter):
    """Move a warning about a translation's reference from the generated page's line (a
    ``docs/auto_examples/*.rst`` no translator edits) to the line of its catalog entry: Locale's
    "inconsistent ... references" and a reference to no target ("undefined label")."""

    LOGGERS = ("sphinx.transforms.i18n", "sphinx.transforms.post_transforms", "sphinx.domains.std")

    def __init__(self, app):
        super().__init__()
        self.app = app

    def filter(self, record):
        node, said = getattr(record, "location", None), record.getMessage()
        if not isinstance(node, nodes.Node) or not is_translated_build(self.app.config):
            return True
        if str(getattr(record, "subtype", "")).startswith("inconsistent"):
            try:  # "... original: [raw sources], translated: [raw sources]"
                original = ast.literal_eval(
                    said[said.index("original: ") + 10 : said.rindex(", translated: ")]
                )
                translated = ast.literal_eval(said[said.rindex("translated: ") + 12 :])
            except (ValueError, SyntaxError):
                return True
            held = [ref for ref in translated if ref not in original] or translated
            docname = self.app.env.current_document.docname
        elif isinstance(node, addnodes.pending_xref) and str(get_source_line(node)[0]).endswith(TRANSLATED):
            target = node.get("reftarget", "")
            held, docname = [node.rawsource, f"<{target}>", target], node.get("refdoc")
        else:
            return True
        domain = docname and docname_to_domain(docname, self.app.config.gettext_compact)
        found = (catalog_entry(self.app.srcdir, self.app.config, domain, None, text, True) for text in held)
        where = next(filter(None, found), None) if domain else None
        if where:
            record.location, record.msg, record.args = where, f"{said}; {KEEP_TARGET}", ()
        return True

    @classmethod
    def install(cls, app):
        """Put a filter on each logger whose warnings it moves (one per logger, this app's)."""
        for name in cls.LOGGERS:
            logger = pylogging.getLogger(f"sphinx.{name}")  # sphinx.util.logging's names
            logger.filters = [f for f in logger.filters if not isinstance(f, cls)] + [cls(app)]


def guarded(parser):
    """Return *parser* made to turn a translation that is not one paragraph or title into text."""

    class Guarded(parser):
        def parse(self, inputstring, document):
            # How sphinx.transforms.i18n names the document of a msgstr.
            translated = document["source"].endswith(":<translated>")
            try:
                super().parse(inputstring, document)
            except Exception:  # a directive Sphinx itself fails on (.. productionlist:: x)
                if not translated:
                    raise
                document[:] = []
            if not translated:
                return
            if not (document[:1] and isinstance(document[0], PARSED_AS)):
                refused = nodes.inline(inputstring, inputstring, refused=True)
                document[:] = [nodes.paragraph("", "", refused)]

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{parser.__name__}"
    return Guarded


def guard_parsers(app):
    """In a translated build, wrap every registered source parser with :func:`guarded`."""
    if is_translated_build(app.config):
        for parser in set(app.registry.get_source_parsers().values()):
            app.add_source_parser(guarded(parser), override=True)


def neutralise(node, msgstr):
    """Show *msgstr* as plain text in place of what Locale made of it."""
    if isinstance(node, nodes.TextElement) and not isinstance(node, nodes.raw):
        node[:] = [nodes.Text(msgstr)]
    else:  # a raw node or an image translated as a whole
        text = nodes.inline if isinstance(node.parent, nodes.TextElement) else nodes.paragraph
        node.replace_self(text(msgstr, msgstr))


class RememberEnglish(SphinxTransform):
    """Note what each translatable node holds beyond words; no file insertion in translations."""

    default_priority = 19  # just before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs):
        if not is_translated_build(self.config):
            return
        # Locale parses every msgstr with this document's settings.
        settings = self.document.settings
        self.document.translation_safety = (
            settings.file_insertion_enabled,
            [
                (node, msg, (safety.additions(node), safety.links(node)))
                for node, msg in extract_messages(self.document)
            ],
        )
        settings.file_insertion_enabled = False


class RefuseAdditions(SphinxTransform):
    """Refuse and neutralise what a translation added; record where it came from."""

    default_priority = 21  # just after Locale

    def apply(self, **kwargs):
        noted = getattr(self.document, "translation_safety", None)
        if noted is None:
            return
        del self.document.translation_safety  # doctrees are pickled
        self.document.settings.file_insertion_enabled, messages = noted
        docname = self.env.current_document.docname
        domain = docname_to_domain(docname, self.config.gettext_compact)
        catalog = get_translator(domain)  # as Locale loaded it
        refused, neutralised = [], []
        for node, msg, english in messages:
            msgstr = catalog.gettext(msg)
            if not isinstance(node, LITERAL_TYPE_NODES):
                msgstr, _ = parse_noqa(msgstr)
            if not msgstr.strip() or msgstr == msg or isinstance(node, ATTRIBUTE_ONLY):
                continue
            reasons = refusals(node, msg, msgstr, english)
            if not reasons:
                continue
            if shown(node) and node not in neutralised:  # an image comes twice: alt, URI
                neutralise(node, msgstr)
                neutralised.append(node)
            where = catalog_entry(self.env.srcdir, self.config, domain, msg)
            refused.append((where or f"{node.source}:{node.line}", "; ".join(reasons)))
        refusals_of(self.env)[docname] = refused


def refusals(node, msg, msgstr, english):
    """Return why the translation *msgstr* of *node* (English *msg*) is refused."""
    # An image or empty literal block parsed for a paragraph leaves it empty.
    emptied = not node.children and not isinstance(node, nodes.image)
    used = shown(node) and not emptied and not any(n.get("refused") for n in node.findall(nodes.inline))
    judged = safety.refusals(
        msg, msgstr, english, node if used else None, literal=isinstance(node, LITERAL_TYPE_NODES)
    )
    return [f"{why} ({url})" if url else why for why, url in judged]


def shown(node):
    """True if the page shows Locale's translation of *node*.

    Locale marks an image untranslated even when it took the translation's
    alt text or, with ``gettext_additional_targets``, its URI.
    """
    return bool(node.get("translated")) or isinstance(node, nodes.image)


def refusals_of(env):
    """The refusals recorded in *env*: {docname or "sphinx": [(location, reason)]}."""
    if not hasattr(env, "refused_translations"):
        env.refused_translations = {}
    return env.refused_translations


def shown_translation(english, translation, refused):
    """What the templates write for *translation* of *english*: text, or the English's HTML.

    Where *refused(english, translation)* says why (gate/words.interface_verdict), the English.
    """
    html = has_markup(english)
    if translation != english and (
        refused(english, translation) or html and markup_problems(english, translation)
    ):
        translation = english
    return Markup(translation) if html else Markup.escape(translation)


def escape_templates(app):
    """Make the templates' gettext return translations judged and escaped (see shown_translation)."""
    templates = getattr(app.builder, "templates", None)
    environment = getattr(templates, "environment", None)
    if environment is None or "gettext" not in environment.globals:
        return  # a builder without Jinja templates
    gettext, ngettext = environment.globals["gettext"], environment.globals["ngettext"]
    language, judged = app.config.language, {}
    try:
        glossary = interface_glossary(os.environ.get("BASE") or None)
    except ReviewError:  # compiled_catalogs.py reports it
        glossary = ()

    def refused(english, translation):
        if (english, translation) not in judged:
            judged[english, translation] = interface_verdict(english, translation, glossary, language)
        return judged[english, translation]

    environment.install_gettext_callables(
        gettext=lambda english: shown_translation(english, gettext(english), refused),
        ngettext=lambda one, many, n: shown_translation(
            one if n == 1 else many, ngettext(one, many, n), refused
        ),
    )
    # Where a string lands outside HTML: {{ _("Out:")|css_string }}, {{ _("Copied")|text }}.
    environment.filters["text"] = lambda value: value.unescape() if isinstance(value, Markup) else value
    environment.filters["css_string"] = css_string


def css_string(value):
    """*value* (HTML-escaped or text) as a quoted CSS string.

    Every ASCII character but letters, digits and spaces is a hex escape, so
    nothing can end the string (a quote, a line break, a backslash) or the
    ``<style>`` element (``</``); other characters cannot.
    """
    text = value.unescape() if isinstance(value, Markup) else str(value)
    safe = lambda c: c.isalnum() or c == " " or not c.isascii()  # noqa: E731
    return '"' + "".join(c if safe(c) else f"\\{ord(c):x} " for c in text) + '"'


def report(app, env):
    """Log every refusal, of this build's documents and of earlier ones still refused."""
    for _, refused in sorted(refusals_of(env).items()):
        for location, reason in refused:
            logger.error(
                "translation refused: %s. Markup, links and directives come from the "
                "English; translate only its words.",
                reason,
                location=location,
            )


def fail_if_refused(app, exception):
    """Fail the build, even without -W, while any translation is refused."""
    if exception is None and any(refusals_of(app.env).values()):
        app.statuscode = 1


def purge(app, env, docname):
    """Forget a document's refusals before it is read again."""
    refusals_of(env).pop(docname, None)


def merge(app, env, docnames, other):
    """Take the refusals a parallel reader recorded."""
    refusals_of(env).update({d: refusals_of(other).get(d, []) for d in docnames})


def setup(app):
    """Register the transforms and handlers."""
    app.setup_extension("extensions.compiled_catalogs")  # catalog_sources
    app.add_transform(RememberEnglish)
    app.add_transform(RefuseAdditions)
    app.connect("builder-inited", guard_parsers)
    app.connect("builder-inited", escape_templates)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("env-updated", report)
    app.connect("build-finished", fail_if_refused)
    AtTheCatalog.install(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
