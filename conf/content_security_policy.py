"""A Content-Security-Policy on every page: the site's own files, and nothing from elsewhere.

The last layer behind translation_safety.py: if markup ever got into a page, the
browser would still load nothing from another site and run nothing but the
site's own scripts. A ``<meta>`` policy cannot stop ``<meta http-equiv="refresh">``
(escaping must) nor set ``frame-ancestors``; the tag is self-closed, for the EPUB's XHTML.
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
    """The site's policy, allowing the inline scripts of *hashes*.

    No ``'unsafe-inline'`` script, so no ``on*=`` attribute or ``javascript:``
    URL runs; ``'unsafe-eval'``: Sphinx's doctools.js compiles the catalog's
    plural rule with ``new Function`` (a Chinese search fails without it).
    Inline styles: the theme, sphinx-design and Sphinx's tables write ``style=``.
    Images also from ``data:``: the theme's icons.
    """
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
