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

from furo import THEME_PATH  # the theme conf.py sets


def add_theme_templates(app):
    if app.builder.name == "gettext":
        app.config.templates_path = [*app.config.templates_path, str(THEME_PATH)]


def setup(app):
    app.connect("builder-inited", add_theme_templates)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
