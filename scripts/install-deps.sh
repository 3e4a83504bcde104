#!/usr/bin/env bash
# Installs what kiln needs to build and test on Debian 12 (run as root).
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  libclang-rt-22-dev liblld-22-dev
  ninja-build cmake libonnx-dev libonnx-testdata libprotobuf-dev
  protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev ccache
  libzstd-dev zlib1g-dev
  python3 python3-pip
)
# Python wheels used by tests and benchmarks (pip specs). onnx is pinned:
# the node-test sweeps keep expected-to-import lists for its test set.
PY_PACKAGES=(onnx==1.23.2 onnxruntime==1.32.0 numpy)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# Keep an existing python3/pip (e.g. pyenv) rather than adding Debian's.
if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
  filtered=()
  for pkg in "${missing[@]}"; do
    [[ "$pkg" == python3 || "$pkg" == python3-pip ]] || filtered+=("$pkg")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

# The specs whose package is missing or at another version than pinned.
pip_missing=$(python3 - "${PY_PACKAGES[@]}" <<'PY'
import importlib.metadata, sys
for spec in sys.argv[1:]:
    name, _, version = spec.partition("==")
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is None or (version and installed != version):
        print(spec)
PY
)
if [[ -n "$pip_missing" ]]; then
  echo "install-deps: pip install" $pip_missing
  python3 -m pip install -q $pip_missing ||
    python3 -m pip install -q --break-system-packages $pip_missing
fi
# The CUDA target assembles PTX with ptxas and links libdevice: a CUDA
# toolkit at $KILN_CUDA_PATH, /usr/local/cuda, or ptxas on PATH; else the
# toolkit's pip wheels (nvidia-cuda-nvcc, nvidia-nvvm) linked as
# /usr/local/cuda.
if ! [[ -x "${KILN_CUDA_PATH:-/usr/local/cuda}/bin/ptxas" ]] && ! command -v ptxas >/dev/null; then
  echo "install-deps: pip install nvidia-cuda-nvcc nvidia-nvvm (ptxas, libdevice)"
  python3 -m pip install -q nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 ||
    python3 -m pip install -q --break-system-packages nvidia-cuda-nvcc==13.0.88 \
      nvidia-nvvm==13.0.88
  toolkit=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
  [[ -e /usr/local/cuda ]] || ln -s "$toolkit" /usr/local/cuda
fi
echo "install-deps: all dependencies present"
