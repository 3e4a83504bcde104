#!/usr/bin/env bash
# The GPU check: kiln's CUDA target on a machine with an NVIDIA GPU.
#
#   test/gpu/run.sh                 on a machine with the GPU and kiln's
#                                   toolchain: builds, prepares the kit, runs it
#   test/gpu/run.sh KIT [RESULTS [run_kit.py options]]
#                                   runs a kit prepared elsewhere (for a GPU
#                                   machine without LLVM/MLIR 22): see
#                                   test/gpu/README.md
#
# Conformance (ONNX node tests and the e2e models on the GPU against their
# references) and the GPU benchmark (kiln vs PyTorch eager and torch.compile
# on the same graphs); results in RESULTS/gpu-results.md and .json
# (RESULTS defaults to $OUT when set, else build/gpu-results).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
results=${2:-${OUT:-build/gpu-results}}
if [[ $# -ge 1 ]]; then
  kit=$1
else
  KILN_SKIP_DEPS=${KILN_SKIP_DEPS:-0} scripts/build.sh
  arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  kit=build/gpu-kit
  python3 bench/gpu/prepare_kit.py build "$kit" --arch "$arch"
fi
nvidia-smi -L || echo "nvidia-smi: not found"
# cuBLAS and cuBLASLt from the CUDA wheels PyTorch uses, when they are not
# on the library path (kiln's runtime opens libcuda.so.1, libcublas and
# libcublasLt with dlopen).
find_cuda_library() {
  python3 - "$1" <<'PY'
import glob, os, sys
pattern = sys.argv[1] + ".so.1[23]"
found = []
try:
    import nvidia
    for root in nvidia.__path__:
        found += glob.glob(os.path.join(root, "**", pattern), recursive=True)
except ImportError:
    pass
try:
    import torch
    found += glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", pattern))
except ImportError:
    pass
print(sorted(found)[-1] if found else "")
PY
}
if [[ -z "${KILN_CUBLAS:-}" ]]; then
  KILN_CUBLAS=$(find_cuda_library libcublas)
  [[ -n "$KILN_CUBLAS" ]] && export KILN_CUBLAS && echo "cuBLAS: $KILN_CUBLAS"
fi
if [[ -z "${KILN_CUBLASLT:-}" ]]; then
  KILN_CUBLASLT=$(find_cuda_library libcublasLt)
  [[ -n "$KILN_CUBLASLT" ]] && export KILN_CUBLASLT && echo "cuBLASLt: $KILN_CUBLASLT"
fi
python3 bench/gpu/run_kit.py "$kit" "$results" "${@:3}"
