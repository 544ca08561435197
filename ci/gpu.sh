#!/usr/bin/env bash
# The GPU job: check the driver, get CuPy, run the CUDA tests in parallel, then the CUDA
# benchmarks.  Run on a machine with an NVIDIA GPU (the self-hosted runner of
# .github/workflows/gpu.yml, or by hand):  bash ci/gpu.sh
#
# PYTHON picks the interpreter (default: python3).  CuPy comes from the `cuda` extra
# unless one is already installed.  Offline machines can point WHEELS at a folder of
# wheels (array-api-compat, ml_dtypes, ...) to install from.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

echo "== driver"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "ci/gpu.sh: nvidia-smi not found: this machine has no NVIDIA driver" >&2
  exit 1
fi
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv

echo "== packages"
# Offline machines (the lent GPU machines have CuPy, NumPy, pytest but no registry): wheels
# from WHEELS go to a folder on PYTHONPATH, and the project runs from this source tree.
if [ -n "${WHEELS:-}" ]; then
  SITE=${SITE:-/tmp/arraydispatch-site}
  "$PY" -m pip install --quiet --no-index --no-deps --no-compile --upgrade --target "$SITE" "$WHEELS"/*.whl
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
if "$PY" -c "import cupy" >/dev/null 2>&1; then
  echo "using the installed CuPy $("$PY" -c 'import cupy; print(cupy.__version__)')"
else
  "$PY" -m pip install --quiet -e ".[cuda,test]"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - <<'PY'
import backends.cuda as cuda
if not cuda.is_available():
    raise SystemExit(f"ci/gpu.sh: CuPy cannot use the GPU: {cuda.unavailable_reason()}")
print(f"{cuda.device_count()} CUDA device(s) visible")
PY

echo "== CUDA tests"
# The cuda-marked tests, and the files whose tests take another path when a GPU is there.
"$PY" -m pytest -n "${CI_WORKERS:-8}" -p no:cacheprovider -m cuda tests/
"$PY" -m pytest -n "${CI_WORKERS:-8}" -p no:cacheprovider tests/tensor/test_autocast.py \
  tests/tensor/test_device.py tests/tensor/test_opcheck.py

echo "== the tour (its CUDA section)"
"$PY" examples/tour.py
# The kernels' compile checks: nvcc for sm_90 and sm_75, NVRTC as CuPy calls it.
"$PY" -m pytest -n "${CI_WORKERS:-8}" -p no:cacheprovider tests/backends/test_cuda_compile.py \
  tests/backends/test_cuda_nvrtc.py

echo "== CUDA benchmarks"
"$PY" ci/bench/cuda.py ${BENCH_ARGS:-}
