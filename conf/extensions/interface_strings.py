"""Strings our extensions write into pages: translated through sphinx.po.

Sphinx's gettext builder extracts interface strings from templates only. An
extension that writes its own sentences (the provenance notes, the
translation notice, the site's author) lists them in :func:`offer`; a gettext
build then adds them to sphinx.pot beside the templates' strings, and
``make update-po`` merges them into every language's sphinx.po. They are
translated at build time with :data:`_`.
"""

from sphinx.builders.gettext import MsgOrigin
from sphinx.locale import get_translation

_ = get_translation("sphinx")


def offer(app, strings, origin):
    """In a gettext build, add *strings* to sphinx.pot, as written in the file *origin*."""
    if app.builder.name != "gettext":
        return
    for english in strings:
        app.builder.catalogs["sphinx"].add(english, MsgOrigin(origin, 1))
