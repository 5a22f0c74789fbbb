"""Give toctree captions the heading level that their ``role="heading"`` requires.

Sphinx 9.0 writes each toctree caption (the sidebar's "Tutorials",
"Contributing", and the captions of in-page toctrees) as
``<p class="caption" role="heading">`` without ``aria-level``. ARIA 1.2
makes ``aria-level`` required on that role, so axe-core reports a critical
``aria-required-attr`` violation on every page (sphinx-doc/sphinx#14030,
open; a proposed fix adds ``aria-level="2"``, the level ARIA 1.1 implied).
Until Sphinx does, this HTML translator adds the same level: a caption heads
a list of pages one level below the page's ``h1``.
"""

from sphinx import addnodes
from sphinx.writers.html5 import HTML5Translator

LEVEL = "2"


class CaptionLevelTranslator(HTML5Translator):
    """Sphinx's HTML5 translator, with ``aria-level`` on toctree captions."""

    def visit_title(self, node):
        start = len(self.body)
        super().visit_title(node)
        if isinstance(node.parent, addnodes.compact_paragraph) and node.parent.get("toctree"):
            # The caption's start tag is the first string Sphinx appended.
            self.body[start] = self.body[start].replace(
                'role="heading"', f'role="heading" aria-level="{LEVEL}"', 1
            )


def setup(app):
    """Use the translator for the HTML builder."""
    app.set_translator("html", CaptionLevelTranslator, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
