"""Where a link in a translation leads, as a browser reads it (conf/gate/links.py).

The one rule of the build and of make check: a host the English does not
link is an error, however the link spells it; another page of a linked host,
or that host's page in another language, is allowed (make check warns).
"""

import pytest

from gate.links import ERROR, WARNING, judge, target

# href -> (scheme, host) as a browser on an https page reads it
SPELLINGS = {
    "https://evil.example/x": ("https", "evil.example"),
    "HTTPS://EVIL.example/": ("https", "evil.example"),
    "//evil.example/x": ("", "evil.example"),
    "/\\evil.example/x": ("", "evil.example"),
    "\\\\evil.example": ("", "evil.example"),
    "https:evil.example": ("https", "evil.example"),
    "https:/\\evil.example/": ("https", "evil.example"),
    "https://example.org@evil.example/": ("https", "evil.example"),
    "https://evil.example:8080/": ("https", "evil.example:8080"),  # another port: another server
    "https://%65vil.example./": ("https", "evil.example"),
    " \thttps://ev\nil.example/": ("https", "evil.example"),
    "javascript:alert(1)": ("javascript", None),
    "JaVaScRiPt:alert(1)": ("javascript", None),
    "mailto:me@example.org": ("mailto", None),
    "../other.html#part": ("", ""),
    "#part": ("", ""),
}


@pytest.mark.parametrize("href", SPELLINGS)
def test_a_link_leads_where_a_browser_takes_it(href):
    assert target(href) == SPELLINGS[href]


# (translation's link, the English entry's links, verdict: None allowed, else its severity)
VERDICTS = [
    ("https://example.org/a", ["https://example.org/a"], None),
    ("../zh_TW/page.html", ["https://example.org/"], None),
    ("https://example.org/zh-tw/", ["https://example.org/"], WARNING),
    ("https://python.org/x", ["https://www.python.org/"], WARNING),
    ("https://zh.wikipedia.org/wiki/R", ["https://en.wikipedia.org/wiki/R"], WARNING),
    ("https://zh-cn.example.org/", ["https://www.example.org/"], WARNING),
    ("https://docs.python.org/zh-cn/3/", ["https://docs.python.org/3/"], WARNING),
    ("//evil.example/", ["https://example.org/"], ERROR),
    ("https://example.org.evil.example/", ["https://example.org/"], ERROR),
    ("https://pwn.readthedocs.io/", ["https://tox.readthedocs.io/"], ERROR),  # another's site
    ("https://api.github.com/", ["https://www.github.com/"], ERROR),
    ("https://zh.medium.com/", ["https://medium.com/"], ERROR),  # a user's site, not a page
    ("https://zh.org/", ["https://en.org/"], ERROR),
    ("mailto:me@evil.example", ["mailto:team@example.org"], ERROR),
    ("mailto:team@example.org", ["mailto:team@example.org"], None),
    ("javascript:alert(1)", [], ERROR),
    ("data:text/html,<b>x</b>", ["https://example.org/"], ERROR),
]


@pytest.mark.parametrize("url, english, expected", VERDICTS)
def test_a_translation_links_only_hosts_its_english_links(url, english, expected):
    verdict = judge(url, english)
    assert (verdict and verdict[0]) == expected, verdict
