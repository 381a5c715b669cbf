# Idle OpenMP threads sleep instead of spinning (issue 30): wavg runs with GNU OpenMP's passive wait policy (spin
# count 0) unless the user chose a policy, which it keeps. libgomp prints its settings once per start: the last
# block is the process that runs (wavg starts itself again to set the policy, src/cli/wait_policy.cpp). inspect,
# which runs no parallel loop, keeps libgomp's default rather than start twice.
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$WAVG" merge --help 2>&1 >/dev/null |
  grep -o "GOMP_SPINCOUNT = '[0-9]*'" | tail -1
env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=verbose "$WAVG" merge --help 2>&1 >/dev/null |
  grep -o "GOMP_SPINCOUNT = '[0-9]*'" | tail -1
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose \
  "$WAVG" inspect "$SAMPLES/mlp/node1.h5" 2>&1 >/dev/null |
  grep -c "GOMP_SPINCOUNT = '300000'"
