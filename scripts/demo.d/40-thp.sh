# corun pages and --thp: the system's huge page settings, then an unmodified
# program over 256 MiB plain and under --thp (sourced by scripts/demo.sh).
step "corun pages  (huge page settings of this machine)"
"$corun" pages || return 1
w=$(dirname "$corun")/workloads
if [[ -x $w/randwalk-mmap ]]; then
  step "randwalk-mmap 256 MiB: plain, then corun run --thp"
  "$w/randwalk-mmap" 256 2000000 | sed 's/ sum=.*//'
  "$corun" run --thp -- "$w/randwalk-mmap" 256 2000000 2>/dev/null | sed 's/ sum=.*//'
fi
