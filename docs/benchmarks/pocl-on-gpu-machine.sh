# Sourced by the run.sh of the self-play records played on the GPU machine's CPU cores: installs
# the wheels carried in .whl/ (and PoCL from .whl/pocl.tar.xz) under /tmp/site, registers PoCL,
# exports the environment (every engine's PoCL on 2 threads) and builds the host search.
# REPO: the repository root on that machine; WHL: the folder of the wheels and pocl.tar.xz
# (default $REPO/.whl; a call that finds them installed in /tmp/site needs neither). Leaves the
# shell in /tmp.
# pocl.tar.xz is made here from a venv's pyopencl[pocl] (Python 3.11 here; PoCL's files are the
# same for 3.12): `cd .venv/lib/python3.11/site-packages; tar cf - pocl_binary_distribution
# pyopencl/.libs/libpocl-*.so pyopencl/.libs/pocl.icd | xz -9e --x86 > pocl.tar.xz` (28 MB).
# Do not strip libpocl: the stripped library no longer loads ("ELF load command address/offset
# not page-aligned"), no OpenCL platform is found, and our engine then searches on the model (a
# match now stops at that). With the tree's 38 MB it exceeds a device call's 64 MiB, so it
# travels in two calls to one warm machine: `split -b 14M`, the first part carried and copied
# to /tmp by a short call, the second carried by the next, which joins them into $WHL/pocl.tar.xz.
WHL=${WHL:-$REPO/.whl}
mkdir -p /tmp/site
[ -d /tmp/site/pyopencl ] || python3 -m pip install -q --no-deps --target /tmp/site $WHL/*.whl 2>&1 | grep -v WARNING | tail -2
[ -d /tmp/site/pocl_binary_distribution ] || tar xJf $WHL/pocl.tar.xz -C /tmp/site
mkdir -p /tmp/icd && cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || ls /tmp/site/pyopencl/.libs/
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src POCL_CPU_MAX_CU_COUNT=2
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
POCL_READY=1
