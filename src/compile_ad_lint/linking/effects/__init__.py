"""What calls into libraries do, one module per behaviour, keyed by the ``Effect`` of their table rows."""
