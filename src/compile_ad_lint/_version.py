"""The package version, in a module of its own so every part can import it without importing the
package's public API (``compile_ad_lint/__init__`` imports ``api``, which imports most modules)."""

__version__ = "0.1.0"
