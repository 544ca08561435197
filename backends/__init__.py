"""Kernels per device: ``backends.cpu`` (NumPy), ``backends.meta`` (shapes and dtypes
only), ``backends.cuda`` (CuPy, loaded on first use), and ``backends.common`` (what
they share, including ``backends.common.device``: the kernels of a plug-in device,
built from its array namespace for ``tensor.register_device``).  ``backends.devices``
holds the plug-in devices this package ships (``strict``, ``dask``): each is only the
arguments of a ``register_device`` call.

Imports: ``backends.common.frontend`` (standard library only); never ``tensor``.  A backend learns what it needs of the front end (the Tensor type, dtypes,
the operator table) from the ``FrontEnd`` that ``tensor`` passes to its
``register(front)``: Note [One-way imports] in ``backends.common.frontend``.
"""

from .common.frontend import FrontEnd

__all__ = ["FrontEnd"]
