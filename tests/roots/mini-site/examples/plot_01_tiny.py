"""
A tiny tutorial
===============

It prints one line.
"""

# %%
# The line it prints. ``print`` writes it to standard output and ends it
# with a newline.

print("one line")
