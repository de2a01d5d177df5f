"""What calls into libraries do, one module per behaviour, each registering a handler per ``Effect``
of the table rows it implements (``registry.py``): ``compile``, ``forward_ad``, ``autocast`` (and the
functorch config), ``autograd``, ``modules`` (wrappers, collections), ``containers`` (getattr,
setattr, registries), ``frameworks`` and ``settings`` (launch settings). Importing the package
registers them all."""

from . import autocast, autograd, compile, containers, forward_ad, frameworks, modules, settings  # noqa: F401
