# corun pages and the --thp launch path (corun thp-exec, which corun run --thp
# shares): real programs that never ask for huge pages end with their buffer
# in huge pages under --thp and not without it; the environment --thp sets;
# "never" on a recorded tree; collapse of a live process from the command.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d)
bg=""
trap '[[ -n $bg ]] && kill "$bg" 2>/dev/null; rm -rf "$tmp"' EXIT
W=$CORUN_BUILD_DIR/workloads
mode=$(sed -nE 's/.*\[([a-z]+)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)

# ---- corun pages: the system ------------------------------------------------
"$CORUN" pages --json > "$tmp/sys.json"; expect_eq "pages exit" $? 0
expect_eq "pages thp_mode" "$(sed -nE 's/^  "thp_mode": "([a-z]+)",?$/\1/p' "$tmp/sys.json")" "${mode:-absent}"
grep -q '^  "pid": null' "$tmp/sys.json" && ok || fail "pages without -p: pid is not null"
"$CORUN" pages > "$tmp/sys.txt"; expect_eq "pages human exit" $? 0
grep -q "^THP mode  *${mode:-absent}$" "$tmp/sys.txt" && ok || fail "pages human: no THP mode line"

# Usage and runtime errors: one line naming the problem.
"$CORUN" pages --collapse > /dev/null 2> "$tmp/e"; expect_eq "--collapse without -p" $? 2
"$CORUN" pages -p 1 --dry-run > /dev/null 2>&1; expect_eq "--dry-run without --collapse" $? 2
"$CORUN" pages -p banana > /dev/null 2>&1; expect_eq "-p banana" $? 2
"$CORUN" pages -p 0 > /dev/null 2>&1; expect_eq "-p 0" $? 2
"$CORUN" pages -p 2147483000 > /dev/null 2> "$tmp/e"; expect_eq "-p absent process" $? 1
grep -q "no such process" "$tmp/e" && ok || fail "absent process: $(cat "$tmp/e")"

# ---- corun thp-exec: status and environment ----------------------------------
"$CORUN" thp-exec -- sh -c 'exit 3'; expect_eq "thp-exec passes the status" $? 3
"$CORUN" thp-exec --thp -- /nonexistent/program 2> /dev/null; expect_eq "thp-exec no program" $? 127
"$CORUN" thp-exec 2> /dev/null; expect_eq "thp-exec without a command" $? 2

envline() { "$CORUN" thp-exec "$@" -- sh -c 'echo "T=${GLIBC_TUNABLES-} P=${LD_PRELOAD-}"'; }
if [[ $mode == madvise ]]; then
  got=$(envline --thp 2> /dev/null)
  [[ $got == *"T=glibc.malloc.hugetlb=1 "* ]] && ok || fail "--thp tunable: $got"
  [[ $got == *"P=$CORUN_BUILD_DIR/libcorun-thp.so" ]] && ok || fail "--thp preload: $got"
  # (An ASan build of corun itself would refuse a preload ahead of its runtime.)
  got=$(ASAN_OPTIONS=verify_asan_link_order=0 GLIBC_TUNABLES=glibc.malloc.arena_max=2 \
        LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 envline --thp 2> /dev/null)
  [[ $got == *"T=glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1 "* ]] && ok || fail "--thp merges tunables: $got"
  [[ $got == *"P=/lib/x86_64-linux-gnu/libm.so.6 $CORUN_BUILD_DIR/libcorun-thp.so" ]] && ok || fail "--thp merges preloads: $got"
  got=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=0 envline --thp 2> /dev/null)
  [[ $got == *"T=glibc.malloc.hugetlb=0 "* ]] && ok || fail "--thp keeps the user's hugetlb: $got"
fi
got=$(envline 2> /dev/null)
expect_eq "no --thp, no change" "$got" "T= P="

# "never" (a recorded tree): said plainly, the program runs unchanged.
got=$("$CORUN" thp-exec --root "$CORUN_FIXTURES/thp/never-6.1" --thp -- sh -c 'echo "P=${LD_PRELOAD-}"; exit 5' 2> "$tmp/e")
expect_eq "never: status" $? 5
expect_eq "never: unchanged" "$got" "P="
grep -q "'never'.*running unchanged" "$tmp/e" && ok || fail "never: stderr says $(cat "$tmp/e")"
# "always" (Linux 4.9 recorded): nothing to set, nothing said without -v.
got=$("$CORUN" thp-exec --root "$CORUN_FIXTURES/thp/old-4.9" --thp -- sh -c 'echo "P=${LD_PRELOAD-}"' 2> "$tmp/e")
expect_eq "always: unchanged" "$got" "P="
expect_eq "always: quiet" "$(cat "$tmp/e")" ""

# ---- the two unmodified programs, plain and under --thp ----------------------
# Each prints buffer_kb and huge_kb: its own buffer's AnonHugePages at the end.
field() { sed -nE "s/.* $1=([0-9]+).*/\1/p" <<<"$2"; }
if [[ $mode == madvise || $mode == always ]]; then
  for prog in randwalk-malloc randwalk-mmap; do
    out=$("$CORUN" thp-exec --thp -- "$W/$prog" 128 200000); expect_eq "$prog --thp exit" $? 0
    buf=$(field buffer_kb "$out"); huge=$(field huge_kb "$out")
    ((huge * 10 >= buf * 9)) && ok || fail "$prog --thp: $huge of $buf KiB in huge pages (< 90%)"
    # The same through the user's command, corun run --thp.
    out=$("$CORUN" run --thp -- "$W/$prog" 128 200000 2> /dev/null); expect_eq "$prog run --thp exit" $? 0
    buf=$(field buffer_kb "$out"); huge=$(field huge_kb "$out")
    ((huge * 10 >= buf * 9)) && ok || fail "$prog run --thp: $huge of $buf KiB in huge pages (< 90%)"
    if [[ $mode == madvise ]]; then
      out=$("$W/$prog" 128 200000)
      buf=$(field buffer_kb "$out"); huge=$(field huge_kb "$out")
      ((huge * 10 < buf)) && ok || fail "$prog plain: $huge of $buf KiB huge in madvise mode"
    fi
  done
  if [[ $mode == madvise ]]; then
    # Why both paths: glibc maps malloc's chunks through its internal __mmap,
    # which the preload does not see, and the tunable does nothing for mmap.
    out=$(LD_PRELOAD=$CORUN_BUILD_DIR/libcorun-thp.so "$W/randwalk-malloc" 64 1000)
    expect_eq "malloc with the preload alone" "$(field huge_kb "$out")" 0
    out=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$W/randwalk-mmap" 64 1000)
    expect_eq "mmap with the tunable alone" "$(field huge_kb "$out")" 0
  fi
else
  echo "THP is '${mode:-absent}': the --thp coverage checks do not apply"
fi

# ---- what the preload promises, seen from inside a program -------------------
if [[ $mode == madvise ]]; then
  "$CORUN" thp-exec --thp -- "$W/preload-probe" > "$tmp/probe"; expect_eq "probe exit" $? 0
  has() { grep -Eq "^case=$1 .*$2" "$tmp/probe" && ok || fail "preload $1: want '$2': $(grep "^case=$1 " "$tmp/probe")"; }
  has large "aligned=1 advised=1"; has large "errno_kept=1"
  has populate "advised=1 huge_pct=(9[0-9]|100)\b"
  has small "advised=0"; has shared "advised=0"
  has mremap "aligned=1 advised=1"; has mremap "moved=1 data_kept=1"
  has toolarge "failed=1 enomem=1"
  "$W/preload-probe" > "$tmp/probe"
  has large "advised=0"
  # THP disabled by prctl and inherited: the preload stands aside, --thp clears it.
  "$W/preload-probe" --thp-disabled env LD_PRELOAD="$CORUN_BUILD_DIR/libcorun-thp.so" \
    "$W/preload-probe" > "$tmp/probe"
  has large "advised=0"
  "$W/preload-probe" --thp-disabled "$CORUN" thp-exec --thp -- "$W/preload-probe" > "$tmp/probe"
  has large "aligned=1 advised=1"; has populate "huge_pct=(9[0-9]|100)\b"
fi

# ---- corun pages --collapse on a live process ---------------------------------
# (In "madvise" mode, where a plain program starts in small pages.)
if [[ $mode == madvise ]]; then
  "$W/randwalk-mmap" 64 1000000000000 > /dev/null & bg=$!
  # Wait (up to 20 s) until the program has filled its buffer.
  for _ in $(seq 200); do
    "$CORUN" pages -p "$bg" --json > "$tmp/p.json" 2> /dev/null || break
    (($(json_num "$tmp/p.json" anon_kb) >= 65536)) && break
    sleep 0.1
  done
  "$CORUN" pages -p "$bg" --collapse --dry-run > "$tmp/dry.txt"; expect_eq "dry run exit" $? 0
  grep -Eq "^  [0-9a-f]+ +[0-9a-f]+ +0K -> \? +planned" "$tmp/dry.txt" && ok || fail "dry run: $(cat "$tmp/dry.txt")"
  "$CORUN" pages -p "$bg" --json > "$tmp/p.json"
  expect_eq "dry run changed nothing" "$(json_num "$tmp/p.json" anon_huge_kb)" 0
  "$CORUN" pages -p "$bg" --collapse --json > "$tmp/c.json"; expect_eq "collapse exit" $? 0
  collapsed=$(sed -nE 's/^    "collapsed": ([0-9]+),$/\1/p' "$tmp/c.json")
  ((collapsed >= 1)) && ok || fail "collapse: $collapsed regions collapsed"
  huge=$(json_num "$tmp/c.json" anon_huge_kb)
  ((huge * 10 >= 65536 * 9)) && ok || fail "after collapse: $huge KiB in huge pages"
  grep -q '"status": "collapsed", "ranges": 32, "ranges_collapsed": 32' "$tmp/c.json" && ok ||
    fail "the buffer's region did not collapse: $(grep status "$tmp/c.json")"
  kill -0 "$bg" && ok || fail "the target died"
  "$CORUN" pages -p "$bg" --collapse > "$tmp/c2.txt"; expect_eq "second collapse exit" $? 0
  grep -q "already in huge pages" "$tmp/c2.txt" && ok || fail "second collapse: $(cat "$tmp/c2.txt")"
  kill "$bg"; wait "$bg" 2> /dev/null; bg=""

  # A process that disabled THP with prctl: reported, and collapse refuses.
  "$W/preload-probe" --thp-disabled "$W/randwalk-mmap" 16 1000000000000 > /dev/null & bg=$!
  for _ in $(seq 100); do
    "$CORUN" pages -p "$bg" --json > "$tmp/p.json" 2> /dev/null || break
    grep -q '"thp_disabled": 1' "$tmp/p.json" && break
    sleep 0.1
  done
  grep -q '"thp_disabled": 1' "$tmp/p.json" && ok || fail "prctl-disabled process not reported"
  "$CORUN" pages -p "$bg" --collapse > /dev/null 2> "$tmp/e"; expect_eq "collapse refused exit" $? 1
  grep -q "disabled transparent huge pages with prctl" "$tmp/e" && ok || fail "collapse refusal: $(cat "$tmp/e")"
  kill "$bg"; wait "$bg" 2> /dev/null; bg=""
fi
finish
