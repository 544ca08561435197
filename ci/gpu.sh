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
if [ -n "${WHEELS:-}" ]; then
  "$PY" -m pip install --quiet --no-index --find-links "$WHEELS" --no-deps "$WHEELS"/*.whl
fi
if "$PY" -c "import cupy" >/dev/null 2>&1; then
  echo "using the installed CuPy $("$PY" -c 'import cupy; print(cupy.__version__)')"
  "$PY" -m pip install --quiet --no-deps -e . || echo "ci/gpu.sh: running from the source tree"
else
  "$PY" -m pip install --quiet -e ".[cuda,test]"
fi
"$PY" - <<'PY'
import backends.cuda as cuda
if not cuda.is_available():
    raise SystemExit(f"ci/gpu.sh: CuPy cannot use the GPU: {cuda.unavailable_reason()}")
print(f"{cuda.device_count()} CUDA device(s) visible")
PY

echo "== CUDA tests"
"$PY" -m pytest -n "${CI_WORKERS:-8}" -m cuda tests/
# The kernels' compile check for sm_90 and an older architecture (nvcc, when installed).
"$PY" -m pytest -n "${CI_WORKERS:-8}" tests/backends/test_cuda_compile.py

echo "== CUDA benchmarks"
"$PY" ci/bench/cuda.py ${BENCH_ARGS:-}
