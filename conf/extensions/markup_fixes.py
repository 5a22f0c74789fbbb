"""Mend what Sphinx, Furo and sphinx-design write invalid or inaccessible.

Each fix is for one upstream fault, measured with the Nu Html Checker,
EPUBCheck and axe-core; remove it when upstream mends its own:

* Sphinx 9.0 writes each toctree caption as ``<p class="caption"
  role="heading">`` without ``aria-level``, which ARIA 1.2 requires
  (axe-core: critical ``aria-required-attr``; sphinx-doc/sphinx#14030). The
  HTML translator adds level 2: a caption heads a list of pages one level
  below the page's ``h1``.
* Furo wraps every table in a ``div.table-wrapper`` and copies all of the
  table's attributes onto it, its ``id`` included: two elements with one id
  (Nu: "Duplicate ID"). The wrapper keeps its class only.
* sphinx-design 0.8 puts ``aria-controls`` on each tab's ``<label>``, which
  HTML forbids on a label associated with a form control (Nu).
  accessibility.js puts the relation on the ``role="tab"`` element it
  makes instead.
"""

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator
from sphinx_design.tabs import sd_tab_label

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


class UniqueIdsAndValidLabels(SphinxPostTransform):
    """Take Furo's copied ids off its table wrappers; sphinx-design's aria-controls off labels."""

    default_priority = 600  # after Furo's wrappers (500) and sphinx-design's tabs (200)
    formats = ("html",)

    def run(self, **kwargs):
        for wrapper in self.document.findall(nodes.container):
            if {"table-wrapper", "math-wrapper"} & set(wrapper["classes"]):
                wrapper["ids"] = []
        for label in self.document.findall(sd_tab_label):
            label.attributes.pop("aria_controls", None)


def setup(app):
    """Use the translator for the HTML builder; register the post-transform."""
    app.set_translator("html", CaptionLevelTranslator, override=True)
    app.add_post_transform(UniqueIdsAndValidLabels)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
