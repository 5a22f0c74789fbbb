"""make check: each translation judged against its English, without a build."""
