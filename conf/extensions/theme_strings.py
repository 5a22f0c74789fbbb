"""Put the theme's own interface strings into sphinx.pot for our translators.

Furo's templates mark "On this page", "Back to top", "Next", "Previous" and the
footer for translation, but neither Furo nor Sphinx ships zh_CN or zh_TW
translations of most of them, so the Chinese pages showed them in English.
Sphinx's gettext builder only extracts strings from ``templates_path``; for
gettext builds this extension adds the theme's folder to that list, after the
builder has set up its own template loader (so nothing is rendered from it).
The strings then reach locale/<lang>/LC_MESSAGES/sphinx.po through
``make update-po`` and are checked by ``make check`` like every other entry.
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
