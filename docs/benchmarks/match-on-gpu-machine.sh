# Sourced by the run.sh of matches played on the GPU machine's CPU cores: `play NAME CPUS
# ARGS...` plays `chessaccel match --backend opencl --tc 10+0.1 ARGS...` pinned to CPUS with a
# quarter of the machine's cores (or CONC) as games at once, the match kept in /tmp/state (resumed from
# there on a later call to a machine still held), its output appended to /tmp/state/NAME.log.
# LIMIT: seconds for the match in this call. It sources pocl-on-gpu-machine.sh (REPO: the
# repository root; WHL there) where the script has not, and runs every engine on two of PoCL's
# basic devices unless POCL_DEVICES says otherwise.
[ -n "${POCL_READY:-}" ] || . $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export POCL_DEVICES=${POCL_DEVICES:-"basic basic"}
nproc; lscpu | grep "Model name"
mkdir -p /tmp/state
half=$(( $(nproc) / 2 ))
play() {   # NAME CPUS ARGS...
  local name=$1 cpus=$2 resume=""; shift 2
  [ -f /tmp/state/$name.json ] && resume=--resume
  timeout ${LIMIT:-540} taskset -c $cpus python3 -P -m chessaccel.host.cli match \
      --backend opencl --concurrency ${CONC:-$(( half / 2 ))} --tc 10+0.1 \
      --name $name --out /tmp/state/$name.json --pgn /tmp/state/$name.pgn $resume "$@" \
      >> /tmp/state/$name.log 2>&1
  echo "exit $?" >> /tmp/state/$name.log
}
