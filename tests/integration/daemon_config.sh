# Configuration errors name their file and line: `corun daemon
# --check-config` and a daemon started with --config exit 2 with one line
# "FILE:LINE: reason"; a good file checks out; bad options exit 2.
. "$(dirname "$0")/daemon-lib.bash"
fx=$CORUN_FIXTURES/daemon

"$CORUN" daemon --check-config "$fx/good.conf" > "$tmp/o" 2> "$tmp/e"; expect_eq "good.conf exit" $? 0
grep -q "good.conf: ok" "$tmp/o" && ok || fail "good.conf: $(cat "$tmp/o" "$tmp/e")"

# check FILE LINE WORDS: --check-config and a daemon started on it.
check() {
  local file=$1 line=$2 words=$3 mode
  for mode in --check-config --config; do
    if [[ $mode == --config ]]; then
      "$CORUN" daemon --config "$file" --foreground --socket "$sock" --journal-dir "$journal" \
        > /dev/null 2> "$tmp/e"; rc=$?
    else
      "$CORUN" daemon --check-config "$file" > /dev/null 2> "$tmp/e"; rc=$?
    fi
    expect_eq "$file $mode exit" "$rc" 2
    expect_eq "$file $mode stderr lines" "$(wc -l < "$tmp/e")" 1
    grep -qF -- "$file:$line: $words" "$tmp/e" && ok || fail "$file $mode: $(cat "$tmp/e")"
  done
}
check "$fx/unknown-key.conf" 6 "unknown key 'frobnicate' in [daemon]"
check "$fx/bad-value.conf" 3 "interval: 'fast' is not a number"
check "$fx/syntax.conf" 3 "syntax error"
check "$fx/bad-section.conf" 3 "unknown section [bogus]"
check "$fx/bad-user.conf" 2 "user: no such user"
check "$fx/long-line.conf" 2 "line longer than"

# A file written here: the error is on its line 4.
printf '[daemon]\n# fine\ninterval = 1\nmax_migrations = lots\n' > "$tmp/mine.conf"
check "$tmp/mine.conf" 4 "max_migrations: 'lots'"

# A policy this build lacks is a mistake of the file, on its line: a file
# --check-config passes must not stop the daemon from starting.
printf '[daemon]\ninterval = 1\npolicy = no-such-policy\n' > "$tmp/policy.conf"
check "$tmp/policy.conf" 3 "unknown policy 'no-such-policy'"

# Unreadable: exit 2, one line naming it.
"$CORUN" daemon --check-config "$tmp/none.conf" > /dev/null 2> "$tmp/e"; expect_eq "missing exit" $? 2
grep -qF "$tmp/none.conf: No such file" "$tmp/e" && ok || fail "missing: $(cat "$tmp/e")"

# Bad options: exit 2.
for args in "--interval abc" "--actuator magic" "--min-cpu -5" "--cgroup relative" "--frobnicate" \
            "--user no-such-user-corun" "extra"; do
  "$CORUN" daemon $args --socket "$sock" > /dev/null 2>&1; expect_eq "daemon $args exit" $? 2
done
[[ -e $sock ]] && fail "a refused daemon left its socket" || ok

# An unknown policy is the user's mistake: exit 2, one line naming it.
"$CORUN" daemon --policy no-such-policy --foreground --socket "$sock" --journal-dir "$journal" \
  > /dev/null 2> "$tmp/e"; expect_eq "unknown policy exit" $? 2
grep -q "unknown policy 'no-such-policy'" "$tmp/e" && ok || fail "unknown policy: $(cat "$tmp/e")"
# The default policy is corun, and it places.
prog "${tag}d"; spawn "${tag}d"
start_daemon --comm "${tag}d"
expect_placing
pol=$(status_json | sed -nE 's/^    "policy": "(.*)",?$/\1/p')
expect_eq "default policy" "$pol" corun
stop_daemon TERM

# A good file with command-line overrides: the command line wins.
printf '[daemon]\ninterval = 5\n[select]\ncomm = nothing-of-ours\n' > "$tmp/ok.conf"
prog "${tag}c"; spawn "${tag}c"; p=$last
start_daemon --config "$tmp/ok.conf" --comm "${tag}c"
status_json | grep -q '"interval_s": 0.2,' && ok || fail "--interval did not override the file"
wait_for "$p selected by --comm over the file's comm" listed "$p"
stop_daemon TERM
finish
