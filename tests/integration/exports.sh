# libcorun exports its public API only: every dynamic symbol is corun_*, and
# none of the internal corun__* helpers leak.
. "$(dirname "$0")/lib.bash"
lib="$CORUN_BUILD_DIR/libcorun.so"
[[ -f $lib ]] || { fail "no $lib"; finish; exit; }
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
[[ -n $syms ]] && ok || fail "no exported symbols"
bad=$(grep -v '^corun_[a-z]' <<<"$syms" | grep -v '^_' || true)
expect_eq "non-public exports" "$bad" ""
leaked=$(grep '^corun__' <<<"$syms" || true)
expect_eq "internal symbols exported" "$leaked" ""
grep -q '^corun_topo_load$' <<<"$syms" && ok || fail "corun_topo_load not exported"
finish
