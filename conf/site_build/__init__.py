"""Scripts that build the site and measure it: the site build, Read the Docs, live preview, bench, stress."""
