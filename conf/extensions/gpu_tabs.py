"""Turn the subsections of a section marked ``gpu-tabs`` into sphinx-design tabs.

A ``tab-set`` directive cannot wrap Sphinx-Gallery's code cells: the example
marks its Results section ``.. rst-class:: gpu-tabs``, one subsection per GPU
count, and this transform builds the containers sphinx-design's ``tab-set``
creates. The offline copies keep the subsections, one after another.
"""

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx_design.shared import create_component

from .offline_copies import is_offline


class SectionsToTabs(SphinxTransform):
    """Replace the subsections of each ``gpu-tabs`` section with one tab-set."""

    # After the i18n Locale transform (20), so tab labels are translated.
    default_priority = 800

    def apply(self, **kwargs):
        if is_offline(self.env):
            return  # on paper and in e-readers the results follow one another
        for section in list(self.document.findall(nodes.section)):
            if "gpu-tabs" not in section["classes"]:
                continue
            subsections = [c for c in section.children if isinstance(c, nodes.section)]
            if not subsections:
                continue
            tab_set = create_component("tab-set", classes=["sd-tab-set", "gpu-tab-set"])
            for sub in subsections:
                title = sub.next_node(nodes.title)
                label = nodes.rubric(title.rawsource, "", *title.children, classes=["sd-tab-label"])
                # With the title's source, the gettext builder still extracts the label.
                label.source, label.line = title.source, title.line
                label["ids"] = list(sub["ids"])  # keep the anchors working
                content = create_component("tab-content", classes=["sd-tab-content"])
                content.extend(c for c in sub.children if c is not title)
                item = create_component("tab-item", classes=["sd-tab-item"])
                item += [label, content]
                tab_set += item
                section.remove(sub)
            section += tab_set


def setup(app):
    """Register the transform."""
    app.add_transform(SectionsToTabs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
