# The simulator: a bundled adversarial workload on a bundled real machine
# (dual Xeon Gold 6140, SMT), every reference placement and every registered policy.
step "corun sim --machine $fx/Intel-Skylake-2xXeon6140.xml --workload tests/fixtures/workloads/adversarial12.txt --policy all"
"$corun" sim --machine "$fx/Intel-Skylake-2xXeon6140.xml" \
  --workload tests/fixtures/workloads/adversarial12.txt --policy all || return 1
step "corun sim --machine skx28 --workload random:32:1  (an SMT preset, a random mix)"
"$corun" sim --machine skx28 --workload random:32:1 || return 1
