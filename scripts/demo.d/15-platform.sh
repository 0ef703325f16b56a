# Sourced by scripts/demo.sh with $corun set: what this machine offers.
step "corun platform  (what this processor and kernel offer, and whether Linux uses it)"
"$corun" platform || return 1
step "corun platform --root tests/fixtures/platform/hybrid-laptop  (a bundled hybrid laptop)"
"$corun" platform --root tests/fixtures/platform/hybrid-laptop \
  --cpuid tests/fixtures/platform/hybrid-laptop/cpuid.txt | sed -n '1,/^memory/p'
