"""A Content-Security-Policy on every HTML page: no inline event handlers, no ``javascript:`` URLs.

The second layer behind translation_safety.py: if script ever got into a
page's HTML, browsers would refuse to run it. Scripts may come only from the
site's own files and from the inline scripts of the templates (Furo's theme
switch), allowed by their hashes, computed from the templates at every build.
No 'unsafe-inline', so no ``on*=`` attribute and no ``javascript:`` URL runs.
'unsafe-eval' stays: Sphinx's doctools.js compiles the catalog's plural rule
with ``new Function``, and a Chinese search fails without it.
"""

import base64
import hashlib
import re
from html import escape
from pathlib import Path


def inline_script_hashes(folders):
    """CSP sources for the inline scripts of the templates under *folders* that hold no Jinja."""
    found = set()
    for folder in folders:
        for template in sorted(Path(folder).rglob("*.html")):
            for body in re.findall(r"<script>(.*?)</script>", template.read_text("utf-8"), re.S):
                if "{{" not in body and "{%" not in body:
                    digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
                    found.add(f"'sha256-{digest}'")
    return sorted(found)


def make_policy(app):
    """Compute the policy once per build, from the templates the builder renders."""
    if app.builder.format == "html":
        hashes = " ".join(inline_script_hashes(app.builder.templates.pathchain))
        app.builder.content_security_policy = (
            f"script-src 'self' 'unsafe-eval' {hashes}; object-src 'none'; base-uri 'self'"
        )


def add_policy(app, pagename, templatename, context, doctree):
    """Put the policy into the page's <head>, before any script."""
    policy = getattr(app.builder, "content_security_policy", None)
    if policy:
        meta = f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">\n'
        context["metatags"] = context.get("metatags", "") + meta


def setup(app):
    """Register the handlers."""
    app.connect("builder-inited", make_policy)
    app.connect("html-page-context", add_policy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
