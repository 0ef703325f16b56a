#!/usr/bin/env bash
# Installs the Debian packages corun needs to build and test, if any is
# missing. Needs root (apt-get); otherwise says what to install and fails.
set -u
pkgs=(cmake make gcc pkg-config
      libhwloc-dev   # topology discovery (live, XML, synthetic)
      hwloc-nox      # hwloc-info/hwloc-calc: the tests check corun against them
      libpfm4-dev    # event encodings per PMU model
      libcmocka-dev  # unit tests
      libinih-dev)   # the daemon's INI configuration file

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "corun: missing packages: ${missing[*]}" >&2
  echo "corun: run as root: apt-get install ${missing[*]}  (or: sudo make deps)" >&2
  exit 1
fi
echo "corun: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
  apt-get update -q >/dev/null && \
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null || {
      echo "corun: apt-get could not install: ${missing[*]}" >&2; exit 1; }
fi
