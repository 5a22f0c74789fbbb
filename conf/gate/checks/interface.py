"""interface: an interface string (sphinx.po) that could leave the place it lands, or that we do not extract.

Interface strings reach HTML, scripts and LaTeX that nobody escapes for us
(gate/words.py says which characters and words a translation may not
add). A sphinx.po entry whose English is not in the extracted sphinx.pot is
one of Sphinx's or a theme's own strings that our pages do not use through
the templates: Sphinx would still write its translation, unescaped, where it
uses it (a heading link's title). Such an entry is refused, not reported as
out of sync only. The build compiles neither (compiled_catalogs.py). The
glossary words a translation may add are those of the base a change is
compared with (``make check BASE=``), never the change's own.
"""

from catalogs.po import english, messages, read
from gate.words import interface_verdict

from .common import error

INTERFACE = "sphinx.po"


def extracted(pot_dir):
    """The English of every entry of *pot_dir*'s sphinx.pot, or None where there is none."""
    pot = pot_dir / "sphinx.pot" if pot_dir else None
    if pot is None or not pot.is_file():
        return None
    return {english(message) for message in messages(read(pot))}


def check(message):
    """Yield why an interface translation is refused."""
    if message.catalog is None or message.catalog.name != INTERFACE:
        return
    known = message.project.interface_strings
    if known is not None and message.msgid not in known:
        yield error(
            "an interface string the site does not extract (Sphinx or a theme would write"
            " its translation as it is): delete the entry; make update-po keeps only"
            " the site's"
        )
        return
    for reason in interface_verdict(
        message.msgid, message.msgstr, message.project.allowed_glossary, message.lang
    ):
        yield error(f"refused: {reason}")
