"""Language-dependent settings, applied once ``-D language=`` is known."""

import os

from languages import by_sphinx_code


def apply_language(app, config):
    """Check the language and set the 404 and URL-layout values for it."""
    lang = by_sphinx_code(config.language)  # unknown language: stop the build
    version = os.environ.get("READTHEDOCS_VERSION")
    if version:
        # Read the Docs serves each language at /<rtd-code>/<version>/.
        config.site_language_dirs = {
            code.sphinx: f"{code.rtd}/{version}" for code in config.site_languages
        }
        config.notfound_urls_prefix = f"/{lang.rtd}/{version}/"
    else:
        config.site_language_dirs = {
            code.sphinx: code.sphinx for code in config.site_languages
        }
        config.notfound_urls_prefix = f"/{lang.sphinx}/"


def setup(app):
    """Register the config values and the handler."""
    app.add_config_value("site_languages", [], "html")
    app.add_config_value("site_language_dirs", {}, "html")
    app.connect("config-inited", apply_language)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
