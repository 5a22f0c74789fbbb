"""Reading, writing, merging, reporting on and diffing the translation catalogs."""
