"""Sentences our extensions write into pages, translated through sphinx.po like the templates'.

Sphinx's gettext builder extracts interface strings from templates only; an
extension lists its own with :func:`extract`, and a gettext build adds them to
sphinx.pot. They are translated at build time with :data:`_`.
"""

from sphinx.builders.gettext import MsgOrigin
from sphinx.locale import get_translation

_ = get_translation("sphinx")


def extract(app, strings, origin):
    """Have gettext builds add *strings* (or ``strings(app)``) to sphinx.pot, as written in *origin*."""

    def add(app, env):
        if app.builder.name == "gettext":
            for english in strings(app) if callable(strings) else strings:
                app.builder.catalogs["sphinx"].add(english, MsgOrigin(origin, 1))

    app.connect("env-updated", add)
