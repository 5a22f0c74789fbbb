"""Per-page links to the same page in the other languages (switcher, hreflang)."""

import posixpath

from languages import SOURCE, by_sphinx_code


def page_links(pagename, current, language_dirs, languages):
    """Return ``(language, relative href, is_current)`` for every language.

    The href goes from the page's own folder up to the site root above the
    language folders, then down into the other language's copy of the page,
    so it works locally (``en/``) and on Read the Docs (``zh-cn/latest/``).
    """
    up_to_lang_root = "../" * pagename.count("/")
    up_to_site_root = "../" * (language_dirs[current].count("/") + 1)
    links = []
    for lang in languages:
        target = posixpath.join(language_dirs[lang.sphinx], pagename + ".html")
        href = up_to_lang_root + up_to_site_root + target
        links.append((lang, href, lang.sphinx == current))
    return links


def home_links(current, language_dirs, languages):
    """Return ``(language, absolute href, is_current)`` to every language's home.

    For the 404 page, which is served at whatever address was missing, so
    relative links would resolve against that address.
    """
    return [
        (lang, f"/{language_dirs[lang.sphinx]}/index.html", lang.sphinx == current)
        for lang in languages
    ]


def add_links(app, pagename, templatename, context, doctree):
    """Expose ``language_links`` to templates and add hreflang <link>s."""
    if app.builder.name == "epub":
        return  # an e-book holds one language, and no other page to link to
    config = app.config
    args = (config.language, config.site_language_dirs, config.site_languages)
    if pagename == config.notfound_pagename:
        links = home_links(*args)
    else:
        links = page_links(pagename, *args)
    context["language_links"] = links
    context["current_language"] = by_sphinx_code(config.language)
    tags = [
        f'<link rel="alternate" hreflang="{lang.html}" href="{href}" />'
        for lang, href, _ in links
    ]
    default = next(href for lang, href, _ in links if lang == SOURCE)
    tags.append(f'<link rel="alternate" hreflang="x-default" href="{default}" />')
    context["metatags"] = context.get("metatags", "") + "\n".join(tags) + "\n"


def setup(app):
    """Connect the page-context handler."""
    app.connect("html-page-context", add_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
