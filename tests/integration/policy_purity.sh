# Policies must not be able to reach the simulator's ground truth or do I/O:
# nothing under src/policy/ includes a simulator, sensor, actuator or engine
# header, calls a clock or prints, and the linked objects of the policy box
# reference no corun_sim_* symbol. A policy that did would be judged on what
# it cannot know on a real machine.
. "$(dirname "$0")/lib.bash"
src="$CORUN_SOURCE_DIR/src/policy"
[[ -d $src ]] || { fail "no $src"; finish; exit; }
n=$(ls "$src"/*.c | wc -l)
((n >= 7)) && ok || fail "expected the six policies and the registry in $src, found $n files"
bad=$(grep -nE '#include[[:space:]]*[<"](corun/)?(sim|sense|act|engine)[^"]*\.h|#include[[:space:]]*"sim/' "$src"/*.c "$src"/*.h || true)
expect_eq "forbidden includes in src/policy" "$bad" ""
bad=$(grep -nE '\b(printf|fprintf|puts|fopen|open|read|write|clock_gettime|time|getenv|exit|rand|srand)[[:space:]]*\(' "$src"/*.c |
      grep -vE '^\S+:[0-9]+:\s*(\*|/\*)' || true)
expect_eq "I/O, clock or unseeded randomness in src/policy" "$bad" ""
# The objects themselves: no reference to the simulator's API.
objs=$(ls "$CORUN_BUILD_DIR"/CMakeFiles/corun_obj.dir/src/policy/*.o 2>/dev/null || true)
if [[ -n $objs ]]; then
  refs=$(nm -u $objs 2>/dev/null | awk '{print $2}' | grep -E '^corun_(sim|sense|act|engine)_' | sort -u || true)
  expect_eq "simulator/sensor/actuator symbols used by policy objects" "$refs" ""
else
  fail "no policy objects under $CORUN_BUILD_DIR"
fi
finish
