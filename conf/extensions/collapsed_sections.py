"""Fold each section marked ``collapsed`` into a closed dropdown the reader opens.

For code a gallery page must run where it stands but does not teach (the CPU
emulation, the launcher): the container sphinx-design's ``dropdown`` directive
creates, the title as its summary. The offline copies keep the section open.
"""

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx_design.shared import create_component

from .offline_copies import is_offline


class SectionsToDropdowns(SphinxTransform):
    """Replace each ``collapsed`` section with a closed sphinx-design dropdown."""

    # After the i18n Locale transform (20), so the summary is translated, and
    # before MarkEnglish (960), which then marks an untranslated one.
    default_priority = 800

    def apply(self, **kwargs):
        if is_offline(self.env):
            return  # paper and e-readers cannot open a dropdown
        for section in list(self.document.findall(nodes.section)):
            if "collapsed" not in section["classes"]:
                continue
            title = section[0]
            summary = nodes.rubric(title.rawsource, "", *title.children)
            # The title's source lets the gettext builder still extract it.
            summary.source, summary.line = title.source, title.line
            if "translated" in title:  # Sphinx's translated/untranslated classes
                summary["translated"] = title["translated"]
            # Links to the section land on the summary. A node's second id would
            # be written as a <span> before <summary>, where HTML allows none.
            first, *others = section["ids"]
            summary["ids"] = [first]
            summary[0:0] = [nodes.inline("", "", ids=[anchor]) for anchor in others]
            for anchor in section["ids"]:
                self.document.ids[anchor] = summary
            dropdown = create_component(
                "dropdown",
                opened=False,
                type="dropdown",
                has_title=True,
                icon=None,
                chevron=None,
                container_classes=["sd-mb-3", "collapsed-section"],
                title_classes=[],
                body_classes=[],
            )
            dropdown += summary
            dropdown.extend(child for child in section.children[1:])
            # Not replace_self(), which would give the dropdown the section's ids.
            section.parent.replace(section, dropdown)


def setup(app):
    """Register the transform."""
    app.add_transform(SectionsToDropdowns)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
