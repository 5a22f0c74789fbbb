"""The ``translation-status`` directive: per language, how much of each page is translated."""

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from catalog_report import catalogs, count_entries
from languages import LANGUAGES

COLUMNS = ("Page", "Progress", "Translated", "Fuzzy", "Untranslated")


class TranslationStatus(SphinxDirective):
    """Render one table per translation from the catalogs, at build time."""

    def cell(self, text, translatable=False):
        """Return a table cell; only translatable ones get a source (and a msgid)."""
        paragraph = nodes.paragraph(text=text)
        if translatable:
            paragraph.source, paragraph.line = self.get_source_info()
        return nodes.entry("", paragraph)

    def row(self, cells, translatable=False):
        return nodes.row("", *(self.cell(str(c), translatable) for c in cells))

    def run(self):
        locale_dir = Path(self.env.srcdir, self.config.locale_dirs[0])
        tables = []
        for lang in LANGUAGES[1:]:
            group = nodes.tgroup(cols=len(COLUMNS))
            group += [nodes.colspec(colwidth=1) for _ in COLUMNS]
            group += nodes.thead("", self.row(COLUMNS, translatable=True))
            body = nodes.tbody()
            for page, path in catalogs(locale_dir, lang.sphinx).items():
                self.env.note_dependency(str(path))  # rebuild when a catalog changes
                counts = count_entries(path)
                body += self.row([page, f"{counts.percent}%", counts.translated,
                                  counts.fuzzy, counts.untranslated])  # fmt: skip
            group += body
            title = nodes.title(text=f"{lang.name} ({lang.sphinx})")
            tables.append(nodes.table("", title, group))
        # Only the container gets the directive's source: the generated titles,
        # page names and numbers inside have none, so they never become msgids.
        return [nodes.container("", *tables, classes=["translation-status"])]


def setup(app):
    """Register the directive."""
    app.add_directive("translation-status", TranslationStatus)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
