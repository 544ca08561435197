"""How our CUDA kernels are compiled and cached (backends/cuda/_compile.py), without a GPU.

A stand-in for the three CuPy calls ``_compile._load`` makes (``compile_using_nvrtc``,
``function.Module``, the toolchain's versions) counts compiles, so the disk cache's
hits, misses and keys can be checked on any machine.  That the options reach NVRTC
without CuPy's ``-ftz=true`` is checked here; that subnormals then survive on a GPU is
``test_subnormals_survive_our_kernels`` in tests/backends/test_cuda.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from backends.cuda import _compile

SOURCE, EXPR = "elementwise.cu", "ad::unary_kernel<ad::Neg<float>, float, float>"


class FakeCupy:
    """Just what ``_compile._load`` touches; ``compiles`` lists (options, expression)."""

    __version__ = "14.2.0"

    def __init__(self, capability: str = "90") -> None:
        self.compiles: list[tuple[tuple[str, ...], str]] = []
        fake = self

        class Module:
            def load(self, image: bytes) -> None:
                assert isinstance(image, bytes)
                self.image = image

            def get_function(self, name: str) -> Any:
                return ("function", name, self.image)

        def compile_using_nvrtc(code: str, options: Any, *, filename: str,
                                name_expressions: list[str]) -> Any:  # fmt: skip
            assert code == _compile.source_text(SOURCE) and filename == SOURCE
            fake.compiles.append((tuple(options), name_expressions[0]))
            return b"CUBIN:" + name_expressions[0].encode(), {
                e: "_Z" + str(len(e)) for e in name_expressions
            }

        self.cuda = SimpleNamespace(
            Device=lambda: SimpleNamespace(compute_capability=capability),
            nvrtc=SimpleNamespace(getVersion=lambda: (13, 0)),
            compiler=SimpleNamespace(compile_using_nvrtc=compile_using_nvrtc),
            function=SimpleNamespace(Module=Module),
        )


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARRAYDISPATCH_CACHE_DIR", str(tmp_path / "kernels"))
    return tmp_path / "kernels"


def test_options_keep_subnormals() -> None:
    # CuPy's RawModule appends -ftz=true; our options say -ftz=false and nothing appends.
    assert "-ftz=false" in _compile.OPTIONS
    assert not any(o.startswith(("-ftz=true", "--use_fast_math", "-use_fast_math"))
                   for o in _compile.OPTIONS)  # fmt: skip


def test_compiles_once_then_loads_from_disk(cache: Path) -> None:
    cupy = FakeCupy()
    fn = _compile._load(cupy, SOURCE, EXPR)
    assert fn == ("function", "_Z" + str(len(EXPR)), b"CUBIN:" + EXPR.encode())
    assert cupy.compiles == [(_compile.OPTIONS, EXPR)]
    assert len(list(cache.glob("*.cubin"))) == 1 and not list(cache.glob("*.tmp"))
    again = FakeCupy()  # another process: the binary and its lowered name from disk
    assert _compile._load(again, SOURCE, EXPR) == fn
    assert again.compiles == []


def test_key_covers_instance_device_toolchain_and_headers(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compile._load(FakeCupy(), SOURCE, EXPR)
    other = "ad::unary_kernel<ad::Neg<double>, double, double>"
    for cupy, expr in [(FakeCupy(), other), (FakeCupy("75"), EXPR)]:
        _compile._load(cupy, SOURCE, expr)
        assert len(cupy.compiles) == 1, (cupy.cuda.Device().compute_capability, expr)
    newer = FakeCupy()
    newer.__version__ = "14.3.0"
    _compile._load(newer, SOURCE, EXPR)
    assert len(newer.compiles) == 1
    # An edited header (CuPy's own cache key leaves included headers out).
    monkeypatch.setitem(_compile._TEXT, "<headers>", _compile._headers() + "// edited")
    edited = FakeCupy()
    _compile._load(edited, SOURCE, EXPR)
    assert len(edited.compiles) == 1
    assert len(list(cache.glob("*.cubin"))) == 5


def test_a_damaged_entry_is_compiled_again(cache: Path) -> None:
    _compile._load(FakeCupy(), SOURCE, EXPR)
    (entry,) = cache.glob("*.cubin")
    for damage in (b"", b"no separator", b"_Z1\0"):
        entry.write_bytes(damage)
        cupy = FakeCupy()
        assert _compile._load(cupy, SOURCE, EXPR)[2] == b"CUBIN:" + EXPR.encode()
        assert len(cupy.compiles) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_cache_only_costs_compiles(cache: Path) -> None:
    cache.mkdir()
    cache.chmod(0o500)
    try:
        for _ in range(2):
            cupy = FakeCupy()
            assert _compile._load(cupy, SOURCE, EXPR)[1] == "_Z" + str(len(EXPR))
            assert len(cupy.compiles) == 1
        assert list(cache.iterdir()) == []
    finally:
        cache.chmod(0o700)


def test_a_cache_path_that_is_a_file_only_costs_compiles(cache: Path) -> None:
    cache.write_text("not a folder")
    for _ in range(2):
        cupy = FakeCupy()
        assert _compile._load(cupy, SOURCE, EXPR)[1] == "_Z" + str(len(EXPR))
        assert len(cupy.compiles) == 1


def test_default_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARRAYDISPATCH_CACHE_DIR", raising=False)
    assert _compile.cache_dir() == Path.home() / ".cache" / "arraydispatch" / "kernels"
