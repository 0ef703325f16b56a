# The control socket decides from the caller's credentials: an unprivileged
# user (nobody, through setpriv) sees only its own processes and cannot
# change settings; root can. Needs root to switch users.
. "$(dirname "$0")/daemon-lib.bash"
if [[ $(id -u) -ne 0 ]] || ! command -v setpriv > /dev/null; then
  echo "SKIP: needs root and setpriv to act as nobody"; exit 0
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

prog "${tag}p"
spawn "${tag}p"; mine=$last                      # root's
setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/${tag}p" 600 &  # nobody's
theirs=$!; kids+=("$theirs")
start_daemon --comm "${tag}p"
wait_for "root's $mine listed" listed "$mine"
wait_for "nobody's $theirs listed" listed "$theirs"

# nobody sees its own process only, and is told how many it cannot see.
as_nobody "$CORUN" status --socket "$sock" --json > "$tmp/nobody.json"; expect_eq "nobody's status exit" $? 0
grep -q "{\"pid\": $theirs," "$tmp/nobody.json" && ok || fail "nobody does not see its own $theirs"
grep -q "{\"pid\": $mine," "$tmp/nobody.json" && fail "nobody sees root's $mine" || ok
grep -q '^  "hidden": [1-9]' "$tmp/nobody.json" && ok || fail "hidden count missing: $(grep hidden "$tmp/nobody.json")"
grep -q '"admin": false' "$tmp/nobody.json" && ok || fail "nobody reported as admin"

# nobody may not change anything; nothing changes.
for req in "--set interval=5" "--pause" "--resume" "--release $mine"; do
  as_nobody "$CORUN" status --socket "$sock" $req > /dev/null 2> "$tmp/e"; rc=$?
  expect_eq "nobody $req exit" "$rc" 1
  grep -q "permission denied" "$tmp/e" && ok || fail "nobody $req: $(cat "$tmp/e")"
done
status_json | grep -q '"interval_s": 0.2,' && ok || fail "interval changed by nobody"

# A request written by hand, bypassing the command, is refused the same way.
py=/usr/bin/python3
if [[ -x $py ]] && as_nobody "$py" -c pass 2> /dev/null; then
  out=$(as_nobody "$py" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"cmd\": \"set\", \"key\": \"interval\", \"value\": \"9\"}\n"); print(s.recv(4096).decode())' "$sock")
  [[ $out == *"permission denied"* ]] && ok || fail "raw request from nobody: $out"
fi

# root may.
"$CORUN" status --socket "$sock" --set interval=0.3 > /dev/null; expect_eq "root --set exit" $? 0
status_json | grep -q '"interval_s": 0.3,' && ok || fail "root's --set interval did not take"
# What the daemon refuses because of the request is an input error: exit 2,
# one line saying why, nothing changed.
"$CORUN" status --socket "$sock" --set frobnicate=1 > /dev/null 2> "$tmp/e"; expect_eq "unknown setting exit" $? 2
grep -q "^corun status: 'frobnicate' cannot be changed while running" "$tmp/e" && ok || fail "unknown setting: $(cat "$tmp/e")"
"$CORUN" status --socket "$sock" --set interval=fast > /dev/null 2> "$tmp/e"; expect_eq "bad value exit" $? 2
[[ $(wc -l < "$tmp/e") -eq 1 ]] && grep -q "interval" "$tmp/e" && ok || fail "bad value: $(cat "$tmp/e")"
"$CORUN" status --socket "$sock" --set policy=nosuch > /dev/null 2> "$tmp/e"; expect_eq "unknown policy exit" $? 2
grep -q "no policy 'nosuch'" "$tmp/e" && ok || fail "unknown policy: $(cat "$tmp/e")"
status_json | grep -q '"interval_s": 0.3,' && ok || fail "a refused --set changed the interval"
"$CORUN" status --socket "$sock" --release 1 > /dev/null 2> "$tmp/e"; expect_eq "release unmanaged exit" $? 2
grep -q "not a managed process" "$tmp/e" && ok || fail "release unmanaged: $(cat "$tmp/e")"
"$CORUN" status --socket "$sock" --pause > /dev/null; expect_eq "root --pause exit" $? 0
"$CORUN" status --socket "$sock" --resume > /dev/null; expect_eq "root --resume exit" $? 0
stop_daemon TERM
expect_eq "daemon exit" "$drc" 0
finish
