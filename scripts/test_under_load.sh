#!/bin/bash
# Runs `make test` RUNS times (default 5) while two busy loops keep both cores loaded, as issue 16
# asks; prints each run's exit status and duration, and exits non-zero if any run failed.
runs=${1:-5}
yes > /dev/null & first=$!
yes > /dev/null & second=$!
trap 'kill $first $second 2>/dev/null' EXIT
failed=0
for run in $(seq "$runs"); do
    started=$(date +%s)
    make test > "test-under-load-$run.log" 2>&1
    status=$?
    echo "run $run: exit $status, $(( $(date +%s) - started )) s (log: test-under-load-$run.log)"
    [ "$status" -eq 0 ] || failed=1
done
exit $failed
