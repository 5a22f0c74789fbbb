"""Language-dependent settings, applied once ``-D language=`` is known."""

import html
import os

from languages import SOURCE, by_sphinx_code
from extensions.interface_strings import _, extract


def apply_language(app, config):
    """Check the language and set the 404 and URL-layout values for it."""
    lang = by_sphinx_code(config.language)  # unknown language: stop the build
    version = os.environ.get("READTHEDOCS_VERSION")
    if version:
        # Read the Docs serves each language at /<rtd-code>/<version>/.
        config.site_language_dirs = {code.sphinx: f"{code.rtd}/{version}" for code in config.site_languages}
        config.notfound_urls_prefix = f"/{lang.rtd}/{version}/"
    else:
        config.site_language_dirs = {code.sphinx: code.sphinx for code in config.site_languages}
        config.notfound_urls_prefix = f"/{lang.sphinx}/"


def translated_site_title(app, pagename, templatename, context, doctree):
    """Name the site in the page's language: the translated landing-page title.

    ``html_title`` is one English string for every language; the sidebar brand
    and every ``<title>`` would otherwise stay English on the Chinese sites.
    Escaped: the theme writes ``docstitle`` as HTML (it is ``html_title``),
    and a translated title's text may hold ``<``.
    """
    if app.config.language != SOURCE.sphinx and app.config.root_doc in app.env.titles:
        context["docstitle"] = html.escape(app.env.titles[app.config.root_doc].astext())


def translated_copyright(app, pagename, templatename, context, doctree):
    """Name the authors in the footer's copyright line in the page's language."""
    author = app.config.author
    if app.config.language != SOURCE.sphinx and author and author in context.get("copyright", ""):
        context["copyright"] = context["copyright"].replace(author, _(author))


def setup(app):
    """Register the config values and the handler."""
    app.add_config_value("site_languages", [], "html", types=[list])
    app.add_config_value("site_language_dirs", {}, "html", types=[dict])
    app.connect("config-inited", apply_language)
    app.connect("html-page-context", translated_site_title)
    app.connect("html-page-context", translated_copyright)
    # The authors' name, for the footer's copyright line.
    extract(app, lambda app: [app.config.author], os.path.join(app.confdir, "conf.py"))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
