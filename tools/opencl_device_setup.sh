# Sourced by the device-side scripts (tools/opencl_device_explore.sh, tools/opencl_perft_ab_device.sh)
# from the root of a checkout that holds a copy of this tree in .gpuwork/ and the py3.12 wheels in
# .whl/: installs the wheels, registers NVIDIA's OpenCL driver (installed but unregistered there),
# lays the package out as pyproject's package-dir maps it and enters .gpuwork/ (or the folder
# GPUWORK names, so that several worktrees can each send their own copy).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
W=$PWD/${GPUWORK:-.gpuwork}
# the package as pyproject's package-dir maps it: chessaccel/ with hdl, sim, host, synth inside
mkdir -p /tmp/pp
cp -r "$W/chessaccel" /tmp/pp/
for d in hdl sim host synth; do ln -sfn "$W/$d" "/tmp/pp/chessaccel/$d"; done
export PYTHONPATH=/tmp/pp:/tmp/site PYTHONUNBUFFERED=1
export CHESSACCEL_OPENCL_CACHE=/tmp/clcache
cd "$W" || exit 1
