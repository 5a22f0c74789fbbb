"""A Content-Security-Policy on every page: the site's own files, and nothing from elsewhere.

The last layer behind translation_safety.py (which escapes or refuses what a
translation adds): if markup ever got into a page, the browser would still
load nothing from another site and run nothing but the site's own scripts.

* ``default-src 'self'``: scripts, styles, images, fonts, frames, requests,
  forms only from the site's own origin; ``object-src``, ``frame-src`` and
  ``worker-src`` nothing at all; ``base-uri 'self'``.
* Scripts: the site's files and the templates' inline scripts by their hashes
  (Furo's theme switch, the root chooser's language choice), computed at
  every build. No ``'unsafe-inline'``, so no ``on*=`` attribute and no
  ``javascript:`` URL runs. ``'unsafe-eval'`` stays: Sphinx's doctools.js
  compiles the catalog's plural rule with ``new Function``, and a Chinese
  search fails without it.
* Styles: ``'unsafe-inline'`` too, because the theme, sphinx-design and
  Sphinx's tables write ``style=`` attributes (widths, ``display: none``);
  what they can do is bounded by the rest (no image or font from elsewhere).
* Images: also ``data:``, the theme's icons in its CSS.

A policy in a ``<meta>`` cannot stop ``<meta http-equiv="refresh">`` (escaping
must), nor set ``frame-ancestors``. The tag is written self-closed, valid in
the EPUB's XHTML as in HTML.
"""

import base64
import hashlib
import re
from html import escape
from pathlib import Path


def script_hash(body):
    """The CSP source that allows the inline script *body*."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"


def inline_script_hashes(folders):
    """CSP sources for the inline scripts of the templates under *folders* that hold no Jinja."""
    found = set()
    for folder in folders:
        for template in sorted(Path(folder).rglob("*.html")):
            for body in re.findall(r"<script>(.*?)</script>", template.read_text("utf-8"), re.S):
                if "{{" not in body and "{%" not in body:
                    found.add(script_hash(body))
    return sorted(found)


def policy(hashes):
    """The site's policy, allowing the inline scripts of *hashes*."""
    scripts = " ".join(["'self'", "'unsafe-eval'", *hashes])
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; frame-src 'none'; worker-src 'none'; "
        "base-uri 'self'; form-action 'self'"
    )


def meta(content):
    """The ``<meta>`` element carrying the policy *content*."""
    return f'<meta http-equiv="Content-Security-Policy" content="{escape(content)}" />'


def make_policy(app):
    """Compute the policy once per build, from the templates the builder renders."""
    if app.builder.format == "html":
        hashes = inline_script_hashes(app.builder.templates.pathchain)
        app.builder.content_security_policy = policy(hashes)


def add_policy(app, pagename, templatename, context, doctree):
    """Put the policy into the page's <head>, before any script."""
    content = getattr(app.builder, "content_security_policy", None)
    if content:
        context["metatags"] = context.get("metatags", "") + meta(content) + "\n"


def setup(app):
    """Register the handlers."""
    app.connect("builder-inited", make_policy)
    app.connect("html-page-context", add_policy)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
