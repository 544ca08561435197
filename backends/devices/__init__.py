"""Plug-in devices this package ships, each the arguments of one ``tensor.register_device``
call (``arguments()``): ``strict`` (array_api_strict, the strictest reading of the
standard) and ``dask`` (dask.array: chunked, lazy, and distributed with a Client).

Imports: nothing at import; each module imports its library when ``arguments()`` is
called (on first use of its device type: ``tt.device("dask")``, ``device="dask"``).
Both are built only through the public call: what they give is a namespace, an array
type, conversions and an engine, never kernels of their own.
"""
