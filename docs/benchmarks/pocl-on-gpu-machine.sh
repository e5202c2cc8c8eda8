# Sourced by the run.sh of the self-play records played on the GPU machine's CPU cores: installs
# the wheels carried in .whl/ (and PoCL from .whl/pocl.tar.xz) under /tmp/site, registers PoCL,
# exports the environment (every engine's PoCL on 2 threads) and builds the host search.
# REPO: the repository root on that machine; WHL: the folder of the wheels and pocl.tar.xz
# (default $REPO/.whl; a call that finds them installed in /tmp/site needs neither). Leaves the
# shell in /tmp.
WHL=${WHL:-$REPO/.whl}
mkdir -p /tmp/site
[ -d /tmp/site/pyopencl ] || python3 -m pip install -q --no-deps --target /tmp/site $WHL/*.whl 2>&1 | grep -v WARNING | tail -2
[ -d /tmp/site/pocl_binary_distribution ] || tar xJf $WHL/pocl.tar.xz -C /tmp/site
mkdir -p /tmp/icd && cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || ls /tmp/site/pyopencl/.libs/
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src POCL_CPU_MAX_CU_COUNT=2
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
POCL_READY=1
