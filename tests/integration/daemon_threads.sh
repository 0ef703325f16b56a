# A process whose threads keep more than one CPU busy is not squeezed onto
# one: three spinning threads are left to the kernel, every thread keeping
# its mask, and status says why; a single-threaded busy process is still
# placed on one CPU; a placed one that starts two more spinning threads is
# given back its own mask (threads born pinned included) and not placed
# again while that lasts. Masks are read from /proc, not from the daemon's
# word.
. "$(dirname "$0")/daemon-lib.bash"
if (( $(nproc --all) < 2 )) || ! command -v cc > /dev/null; then
  echo "SKIP: needs a C compiler and two CPUs"; exit 0
fi
# spin N [LATER]: N threads spinning (the main one among them); LATER more
# once SIGUSR1 comes. A real multithreaded program: `sh -c` with background
# loops would be several processes.
cat > "$tmp/spin.c" << 'EOF'
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
static volatile sig_atomic_t more;
static void *spin(void *a) { for (;;) __asm__ volatile(""); return a; }
static void on_usr1(int s) { more = s; }
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), later = argc > 2 ? atoi(argv[2]) : 0;
    pthread_t t;

    signal(SIGUSR1, on_usr1);
    for (int i = 1; i < n; i++)
        pthread_create(&t, NULL, spin, NULL);
    while (!later || !more)
        __asm__ volatile("");
    for (int i = 0; i < later; i++)
        pthread_create(&t, NULL, spin, NULL);
    spin(NULL);
}
EOF
cc -O0 -pthread -o "$tmp/${tag}m" "$tmp/spin.c" || { fail "cannot build the spinner"; finish; exit; }
cp "$tmp/${tag}m" "$tmp/${tag}s"
"$tmp/${tag}m" 3 & multi=$!; kids+=("$multi")
"$tmp/${tag}s" 1 2 & single=$!; kids+=("$single")
orig=$(allowed $$)

# The process's entry in the status, on one line.
entry() { status_json 2>/dev/null | tr -d '\n' | grep -oE "\{\"pid\": $1, [^{}]*(\{[^{}]*\}[^{}]*)?\}"; }
placed_cpu() { entry "$1" | sed -nE 's/.*"placed_cpu": ([0-9]+),.*/\1/p'; }
is_placed() { [[ -n $(placed_cpu "$1") ]]; }
left_to_kernel() { entry "$1" | grep -q '"placed_cpu": null, "why": "left to the kernel: its [0-9]* threads want'; }
threads_of() { ls /proc/"$1"/task | wc -l; }

start_daemon --comm "${tag}[ms]"
expect_placing
# Decided: the daemon has measured the three threads and says why it leaves them.
wait_for "$multi (3 threads) left to the kernel" left_to_kernel "$multi"
wait_for "single-threaded $single placed" is_placed "$single"
# Two more ticks, so that a wrong placement has had time to show.
t0=$(ticks); wait_for "two more ticks" ticks_above $((t0 + 1))
expect_eq "3-thread $multi: every thread keeps its mask" "$(affinity_of "$multi")" "$orig"
left_to_kernel "$multi" && ok || fail "$multi: $(entry "$multi")"
entry "$multi" | grep -qE '"cpus_wanted": (1\.[6-9]|[2-9])' && ok ||
  fail "$multi: cpus_wanted not above 1.5: $(entry "$multi")"
expect_eq "single-threaded $single pinned to its CPU" "$(affinity_of "$single")" "$(placed_cpu "$single")"

# The placed one starts two spinning threads, born on its one CPU: it is
# given back its own mask, every thread of it, and left to the kernel.
kill -USR1 "$single"
three() { [[ $(threads_of "$single") == 3 ]]; }
wait_for "$single starts two threads" three
wait_for "$single given back" left_to_kernel "$single"
expect_eq "$single: every thread has its mask back" "$(affinity_of "$single")" "$orig"
status_json | tr -d '\n' | grep -q "\"pid\": $single, \"comm\": \"${tag}s\", \"from\": [0-9]*, \"to\": null, \"error\": null, \"why\": \"given back: its 3 threads want" &&
  ok || fail "no migration record says why $single was given back"
t0=$(ticks); wait_for "two more ticks" ticks_above $((t0 + 1))
is_placed "$single" && fail "$single placed again while its threads want more than one CPU" || ok
expect_eq "$single: still its own mask" "$(affinity_of "$single")" "$orig"

stop_daemon TERM
expect_eq "daemon exit on SIGTERM" "$drc" 0
expect_eq "$multi: its mask after the daemon stops" "$(affinity_of "$multi")" "$orig"
expect_eq "$single: its mask after the daemon stops" "$(affinity_of "$single")" "$orig"
ls "$journal" 2>/dev/null | grep -q . && fail "journal entries left: $(ls "$journal")" || ok
finish
