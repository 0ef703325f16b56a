# corun stat and corun events (sourced by scripts/demo.sh with $corun set).
step "corun stat -- sh -c 'a short loop'  (counters here; missing ones say why)"
"$corun" stat -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' || true
step "corun events --pmu skx  (presets encoded for a Skylake-SP PMU by libpfm4)"
"$corun" events --pmu skx
