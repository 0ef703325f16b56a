# Sourced by scripts/demo.sh ($corun and $build set): a bundled batch of
# eight kernels of known classes, placed by corun's default policy and by
# linux (first in, first out, unpinned), side by side.
step "corun batch -j 2 --compare linux bench/kernels/demo.jobs  (bundled kernels)"
PATH="$build/kernels:$PATH" "$corun" batch -j 2 --compare linux bench/kernels/demo.jobs
rc=$?
((rc == 0)) || { echo "demo batch: exit status $rc" >&2; false; }
