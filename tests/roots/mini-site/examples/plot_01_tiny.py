"""
A tiny tutorial
===============

It prints one line.
"""

# %%
# The line it prints.

print("one line")
