#!/usr/bin/env bash
# The tests and suites a Swift Testing log says started and never says ended: what a run that
# was stopped at its time limit was waiting for.
#
#     bash Scripts/unfinished-tests.sh .build/test-run.log
set -eu
log="$1"
ended=$(sed -nE 's/^[✔✘] (Test|Suite) (.*) (passed|failed) after .*/\2/p' "$log" | sed -E 's/ with [0-9]+ test cases?$//')
# (Left out: the run's own "Test run started.", which ends last, when nothing else is left, and
# the cases of parameterized tests, whose ends are not printed one by one.)
sed -nE 's/^◇ (Test|Suite) (.*) started\.$/\1 \2/p' "$log" | grep -vxF "Test run" | grep -v "^Test case " | while read -r kind name; do
    grep -qxF -- "$name" <<< "$ended" || echo "    $kind $name"
done
