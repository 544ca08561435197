"""``cupy.cuda.compiler`` of the cudasim stand-in.

``compile_using_nvrtc`` returns an "image" (bytes, as NVRTC's cubin) that holds the
code and options themselves, so one read back from the kernel disk cache in another
process loads too, and lowered names that differ from the name expressions (as NVRTC's
mangled names do), so a caller that looks a kernel up by its expression fails here as
it would on a GPU.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.cudasim._modules import CompileException

__all__ = ["LOWERED", "CompileException", "compile_using_nvrtc"]

LOWERED = "cudasim-lowered:"


def compile_using_nvrtc(
    source: str, options: Sequence[str] = (), arch: Any = None, filename: str = "kern.cu",
    name_expressions: Sequence[str] | None = None, log_stream: Any = None,
    cache_in_memory: bool = False, jitify: Any = None, method: Any = None,
) -> tuple[bytes, dict[str, str]]:  # fmt: skip
    names = list(name_expressions or ())
    image = json.dumps({"code": source, "options": list(options), "names": names}).encode()
    return image, {name: LOWERED + name for name in names}
