#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh - install the Debian packages the host side of module_async lacks:
# as root with apt-get, else it prints the command to run and fails (exit 3).

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

# The builds (ccache: one store for all trees), the VM, the guest's static
# kmod (autoconf ... libzstd-dev), the checks (debootstrap: the fresh stage;
# python3-typeshed: the stubs mypy --strict needs for lava.py's yaml;
# locales: a translation to run in).
readonly packages=(
	autoconf automake bc bison build-essential busybox-static ccache cpio debootstrap
	dwarves flex gcc-12 kmod libelf-dev liblzma-dev libssl-dev
	libtool libzstd-dev locales mypy pkgconf python3 python3-typeshed qemu-system-x86
	rsync shellcheck sparse util-linux xz-utils zstd
)
# For make lava only: lava-dispatcher brings 134 packages (212 MB).
readonly lava_packages=(lava-dispatcher python3-jinja2 python3-yaml)

usage()
{
	cat <<EOF
usage: $PROG [--lava] [--list] [--help]
Installs, if missing: ${packages[*]}

  --lava   also those of make lava: ${lava_packages[*]}
  --list   print every package name (the LAVA ones too), one a line, and exit
  --help   this text
EOF
}

wanted=("${packages[@]}")
while [ $# -gt 0 ]; do
	case "$1" in
	--lava) wanted+=("${lava_packages[@]}") ;;
	--list) printf '%s\n' "${packages[@]}" "${lava_packages[@]}"; exit 0 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done

# One dpkg-query for all (one each cost a second of every warm run).
mapfile -t missing < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${wanted[@]}" \
	2>/dev/null | awk 'NR == FNR { if ($2 == "installed") ok[$1] = 1; next }
		!($0 in ok)' - <(printf '%s\n' "${wanted[@]}"))
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$EUID" -eq 0 ] ||
	die "missing packages; as root run:"$'\n'"  apt-get update &&" \
		"apt-get install -y ${missing[*]}"

log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2 || die "apt-get update failed"
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
	die "apt-get install ${missing[*]} failed"
