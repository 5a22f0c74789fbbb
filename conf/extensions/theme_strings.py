"""Put the theme's own interface strings into sphinx.pot for our translators.

Furo ships no zh_CN or zh_TW translation of most of its strings ("On this
page", "Back to top"...), and Sphinx's gettext builder extracts only from
``templates_path``: a gettext build adds the theme's folder to it, once its
own template loader is set up (so nothing is rendered from there).
"""

from pathlib import Path

from furo import THEME_PATH  # the theme conf.py sets


def theme_folder(app):
    """Furo's templates, reached through the project's .venv when it holds them.

    sphinx.pot records each string's template as a path relative to the
    output folder; going through ``<project>/.venv`` (a symlink in the tests'
    project copies) gives the same path in every checkout.
    """
    venv = Path(app.srcdir).parent / ".venv"
    try:
        return venv / THEME_PATH.relative_to(venv.resolve())
    except ValueError:
        return THEME_PATH


def add_theme_templates(app):
    if app.builder.name == "gettext":
        app.config.templates_path = [*app.config.templates_path, str(theme_folder(app))]


def setup(app):
    app.connect("builder-inited", add_theme_templates)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
