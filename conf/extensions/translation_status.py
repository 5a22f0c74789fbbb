"""The ``translation-status`` directive: per language, how much of each page is translated
(catalogs/merge.py counts it, as for ``make stat``)."""

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from languages import LANGUAGES
from extensions.compiled_catalogs import catalog_folder
from extensions.translation_notice import doc_link
from catalogs.po import language_catalogs
from catalogs.merge import current_pot_dir, language_counts

COLUMNS = ("Page", "Progress", "Translated", "Outdated", "Untranslated")
# sphinx.po holds no page but the strings of the templates and the theme.
INTERFACE = "The site's interface: menus, buttons and labels"


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

    def page_cell(self, page):
        """The page's title, in the reader's language, linking to it."""
        if page == "sphinx":
            return self.cell(INTERFACE, translatable=True)
        if page not in self.env.found_docs:
            return self.cell(page)
        return nodes.entry("", nodes.paragraph("", "", doc_link(page, self.env.docname)))

    def run(self):
        locale_dir = catalog_folder(self.env.srcdir, self.config)
        pot_dir = current_pot_dir(self.env.srcdir)
        tables = []
        catalogs = [
            po for lang in LANGUAGES[1:] for po in language_catalogs(locale_dir, lang.sphinx).values()
        ]
        for path in [*catalogs, *(pot_dir.rglob("*.pot") if pot_dir else [])]:
            self.env.note_dependency(str(path))  # rebuild when a catalog or the English changes
        for lang in LANGUAGES[1:]:
            group = nodes.tgroup(cols=len(COLUMNS))
            group += [nodes.colspec(colwidth=1) for _ in COLUMNS]
            group += nodes.thead("", self.row(COLUMNS, translatable=True))
            body = nodes.tbody()
            for page, counts in language_counts(lang.sphinx, locale_dir, pot_dir).items():
                row = self.row(
                    [f"{counts.percent}%", counts.translated, counts.outdated, counts.untranslated]
                )
                row.insert(0, self.page_cell(page))
                body += row
            group += body
            # Captioned with the language's English name, translated like the
            # column heads: a reader sees every language named in their script.
            title = nodes.title(text=f"{lang.english or lang.name} ({lang.sphinx})")
            if lang.english:
                title.source, title.line = self.get_source_info()
            tables.append(nodes.table("", title, group))
        # Only the container, the column heads, the captions and INTERFACE get
        # the directive's source: the page names and numbers inside have none,
        # so they never become msgids.
        return [nodes.container("", *tables, classes=["translation-status"])]


def setup(app):
    """Register the directive."""
    app.setup_extension("extensions.compiled_catalogs")  # catalog_sources
    app.add_directive("translation-status", TranslationStatus)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
