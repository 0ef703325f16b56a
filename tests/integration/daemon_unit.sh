# The packaging: the example configuration checks out, and the systemd unit
# passes `systemd-analyze verify` (with ExecStart pointed at this build).
. "$(dirname "$0")/daemon-lib.bash"
pkg=$CORUN_SOURCE_DIR/packaging
"$CORUN" daemon --check-config "$pkg/corund.conf" > /dev/null 2> "$tmp/e"
expect_eq "example corund.conf checks out" $? 0
if ! command -v systemd-analyze > /dev/null; then
  echo "SKIP: systemd-analyze is not installed: the unit file was not verified"
  finish; exit
fi
sed "s|/usr/local/bin/corun|$CORUN|" "$pkg/corund.service" > "$tmp/corund.service"
systemd-analyze verify "$tmp/corund.service" > "$tmp/v" 2>&1
expect_eq "systemd-analyze verify exit" $? 0
[[ -s $tmp/v ]] && fail "systemd-analyze verify says: $(cat "$tmp/v")" || ok
for cap in CAP_SYS_NICE CAP_PERFMON CAP_SYS_PTRACE; do
  grep -q "^CapabilityBoundingSet=.*$cap" "$pkg/corund.service" && ok || fail "unit lacks $cap"
done
grep -q "^CapabilityBoundingSet=.*CAP_SYS_ADMIN" "$pkg/corund.service" && fail "unit grants CAP_SYS_ADMIN" || ok
grep -q "^RuntimeDirectoryPreserve=yes" "$pkg/corund.service" && ok || fail "journal dir not preserved across a crash"
finish
