"""Say at the top of a partly translated page how much of it is translated.

Under the title, in the reader's language: the share translated, how many
paragraphs show the English because it changed after they were translated
(fuzzy), how many are not translated yet (bilingual.py counts them), and links
to the translation status page and the translators' guide.
"""

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

from extensions.bilingual import STATE, is_translated_build
from extensions.interface_strings import _, extract

SHARE = "%(percent)s%% of this page is translated."
FUZZY = "%(count)s paragraphs show the English because the English changed after they were translated."
MISSING = "%(count)s paragraphs are not translated yet and show the English."
LINKS = "%(status)s shows every page; %(guide)s explains how to help."
# The pages LINKS points to, by placeholder; the links show their (translated) titles.
PAGES = {"status": "translation-status", "guide": "translating"}


def counts(document):
    """Return how many messages of a translated *document* are translated, fuzzy, missing."""
    state = document.get(STATE) or {}
    fuzzy, missing = state.get("fuzzy", 0), state.get("missing", 0)
    return state.get("total", 0) - fuzzy - missing, fuzzy, missing


def sentence(template, **values):
    """A paragraph's worth of inline nodes: *template* translated, placeholders filled.

    A value may be a node (a link): the sentence is split around it.
    """
    parts = re.split(r"%\((\w+)\)s", _(template).replace("%%", "%"))
    result = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if part:
                result.append(nodes.Text(part))
            continue
        value = values.get(part)
        result.append(value if isinstance(value, nodes.Node) else nodes.Text(str(value)))
    return result


def doc_link(docname, refdoc):
    """A link to *docname* showing its title, as the ``doc`` role makes it."""
    link = addnodes.pending_xref("", nodes.inline(text=docname), refdomain="std", reftype="doc")
    link.attributes.update(reftarget="/" + docname, refdoc=refdoc, refexplicit=False, refwarn=True)
    return link


class TranslationNotice(SphinxTransform):
    """Put the notice under the title of a partly translated page."""

    default_priority = 970  # after bilingual.MarkEnglish (960), which must not mark it

    def apply(self, **kwargs):
        if not is_translated_build(self.config):
            return
        translated, fuzzy, missing = counts(self.document)
        section = self.document.next_node(nodes.section)
        if not (fuzzy or missing) or section is None:
            return
        total = translated + fuzzy + missing
        text = sentence(SHARE, percent=translated * 100 // total)
        if fuzzy:
            text += _spaced(text, sentence(FUZZY, count=fuzzy))
        if missing:
            text += _spaced(text, sentence(MISSING, count=missing))
        docname = self.env.current_document.docname
        if all(page in self.env.found_docs for page in PAGES.values()):
            links = {key: doc_link(page, docname) for key, page in PAGES.items()}
            text += _spaced(text, sentence(LINKS, **links))
        notice = nodes.container(
            "", nodes.paragraph("", "", *text), classes=["translation-notice", "no-search"]
        )
        position = 1  # after the title and its English copy
        while position < len(section) and "bilingual-en" in section[position].get("classes", []):
            position += 1
        section.insert(position, notice)


def _spaced(before, after):
    """*after*, with a space in front if the text before ends with a Latin character."""
    last = before[-1].astext()[-1:] if before else ""
    return ([nodes.Text(" ")] if last and ord(last) < 0x2E80 else []) + after


def setup(app):
    """Register the transform; extract its sentences for translators."""
    app.add_transform(TranslationNotice)
    extract(app, (SHARE, FUZZY, MISSING, LINKS), __file__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
