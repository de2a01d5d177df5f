"""Adapters that plug the analyzer into other tools (flake8; pre-commit uses the CLI directly).

Each is a thin layer over ``compile_ad_lint.api.Analyzer``; none of them writes files.
"""
