"""The pieces of the ``compile-ad-lint`` command line (``cli.py`` is its entry point and parser)."""
