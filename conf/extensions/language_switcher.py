"""Per-page links to the same page in the other languages (switcher, hreflang).

A local build of some languages (``make html LANGUAGES=zh_TW``) is given the
languages whose every page exists once it is done and the folder of every
language's HTML (the config values ``site_languages_built`` and
``site_html_root``, from build/site.py): a page of another language is linked
only if it exists there; the switcher says instead that it is not built yet.
Read the Docs builds every language from the same sources: every page is linked.
"""

import posixpath
from pathlib import Path

from languages import SOURCE, by_sphinx_code


def page_links(pagename, current, language_dirs, languages):
    """Return ``(language, relative href, is_current)`` for every language: up to the
    folder above the languages' (``en/``, ``zh-cn/latest/``), down into the other's page."""
    up_to_lang_root = "../" * pagename.count("/")
    up_to_site_root = "../" * (language_dirs[current].count("/") + 1)
    links = []
    for lang in languages:
        target = posixpath.join(language_dirs[lang.sphinx], pagename + ".html")
        href = up_to_lang_root + up_to_site_root + target
        links.append((lang, href, lang.sphinx == current))
    return links


def home_links(current, language_dirs, languages):
    """Return ``(language, absolute href, is_current)`` to every language's home: for
    the 404 page, served at whatever address was missing."""
    return [(lang, f"/{language_dirs[lang.sphinx]}/index.html", lang.sphinx == current) for lang in languages]


def unbuilt(links, pagename, config):
    """*links*, with ``None`` for the href of a page no build has made (see the module)."""
    root = config.site_html_root
    if not root or not config.site_languages_built:
        return links
    return [
        (lang, href, current)
        if current
        or lang.sphinx in config.site_languages_built
        or (Path(root) / config.site_language_dirs[lang.sphinx] / f"{pagename}.html").is_file()
        else (lang, None, current)
        for lang, href, current in links
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
        links = unbuilt(page_links(pagename, *args), pagename, config)
    context["language_links"] = links
    context["current_language"] = by_sphinx_code(config.language)
    tags = [
        f'<link rel="alternate" hreflang="{lang.html}" href="{href}" />'
        for lang, href, _ in links
        if href is not None
    ]
    default = next(href for lang, href, _ in links if lang == SOURCE)
    if default is not None:
        tags.append(f'<link rel="alternate" hreflang="x-default" href="{default}" />')
    context["metatags"] = context.get("metatags", "") + "\n".join(tags) + "\n"


def setup(app):
    """Register the partial build's config values; connect the page-context handler."""
    # Not part of the pages' build info: build/site.py has Sphinx write every page
    # again when the languages it links change (a changed "html" value would also
    # leave a .buildinfo.bak in the published site).
    app.add_config_value("site_languages_built", [], "", types=[list])
    app.add_config_value("site_html_root", "", "", types=[str])
    app.connect("html-page-context", add_links)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
