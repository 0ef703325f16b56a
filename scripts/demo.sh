#!/usr/bin/env bash
# The main job on bundled defaults: what `make demo` shows a new user.
set -u
build=${1:-build}
corun=$build/corun
fx=tests/fixtures/topologies
step() { printf '\n==> %s\n' "$*"; }

step "corun topo  (this machine)"
"$corun" topo || exit 1
step "corun topo --input $fx/Intel-Skylake-2xXeon6140.xml  (a bundled real machine)"
"$corun" topo --input "$fx/Intel-Skylake-2xXeon6140.xml" | head -n 40
[[ -d scripts/demo.d ]] && for s in scripts/demo.d/*.sh; do
  [[ -f $s ]] && { . "$s" || exit 1; }
done
exit 0
