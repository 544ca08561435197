"""cudasim: backends/cuda's own kernels executed on the CPU, for tests only.

Imports: nothing at package level (the modules: NumPy, ctypes and the standard library;
never ``backends``, ``tensor`` or ``dispatch`` except in the tests and the plugin).

The pieces:
- ``include/cudasim.h``: what a ``.cu`` file needs to compile as host C++ (``g++ -x c++``)
  with the toolkit's own host-capable ``cuda_fp16.h``/``cuda_bf16.h``: the qualifiers,
  ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, ``__shared__``, ``__syncthreads``,
  the ``__shfl_*_sync`` family, ``__syncwarp``, atomics, the reinterpreting intrinsics;
  ``include/cudasim_runtime.cpp``: each CUDA thread a fiber with its own stack, one block
  at a time, a deterministic scheduler (forward, reverse or seeded-shuffle order per
  round, ``ARRAYDISPATCH_CUDASIM_ORDER``), real barriers, warp rendezvous for shuffles,
  atomics that yield, deadlock and divergent-barrier reports, faults caught.
- ``_build``: one shared library per source with every instance, through generated
  ``extern "C"`` trampolines that deduce the kernel's parameter types from its address;
  cached by content hash (Note [Build cache]).
- ``_launch``: CuPy-style launches (``f(grid, block, args)``) with every argument checked
  against the kernel's parameter types, and guarded copies of the arrays (Note [Guarded
  copies]) that turn out-of-bounds accesses into errors.
- ``_array``/``_device``/``_modules`` and ``fake/``: a stand-in ``cupy``/``cupyx`` backed by
  NumPy that the backend runs on unchanged; ``plugin`` installs it in a pytest session.
- ``test_runtime``/``test_kernels``: the emulation's semantics and our kernels against
  NumPy, in-process; ``test_cuda_suite``: the CUDA test files in a plugin session.

What the harness cannot verify (the GPU run, ci/gpu.sh, still must):
- NVRTC's rules: the harness compiles with g++, which accepts GCC builtins, host headers
  and C++ that NVRTC rejects (tests/backends/test_cuda_nvrtc.py checks NVRTC; and
  test_cuda_compile.py nvcc for sm_90/sm_75);
- device numerics: host libm instead of CUDA's libdevice (last-bit differences), no FMA
  contraction (nvcc/NVRTC contract by default), ``rsqrt`` as ``1/sqrt``; and CuPy's own
  kernels (ufuncs, sorts, cuBLAS, cuRAND) are NumPy's here, so where CuPy behaves
  differently from NumPy the harness shows NumPy's behaviour;
- real concurrency: blocks run one after another and threads of a block interleave only
  where they wait (barrier, shuffle, atomic), so races between blocks, memory ordering
  and visibility (fences, ``volatile``), and warp-synchronous code that relies on
  lockstep without ``__syncwarp`` are not exercised; atomics are exact by construction;
- streams and events on a device: work runs when it is queued (only non-blocking
  device-to-host copies are deferred to the next synchronisation); overlap, priorities,
  cross-stream races and event timing are the GPU's;
- memory: 48 KiB shared-memory and register limits, occupancy, misaligned vector loads
  (x86 does not fault), reads up to 271 bytes past an array (they read 0xff bytes and
  usually change results, but are not reported), and ``numpy.asarray(device_array)``,
  which CuPy refuses and a NumPy subclass cannot;
- DLPack and ``__cuda_array_interface__`` with the real CuPy and with PyTorch's CUDA
  tensors (the fake's own round trips are covered);
- speed: nothing here says anything about GPU performance.
"""
