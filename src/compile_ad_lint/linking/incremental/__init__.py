"""Incremental analysis: function walks memoized, summarized and replayed."""
