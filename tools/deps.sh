#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh - install the Debian packages the host side of module_async needs.
#
# Installs only what is missing. As root it runs apt-get itself (one
# `apt-get update`, then `apt-get install -y`); otherwise it prints the exact
# command to run and fails (exit 3).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

# What each package is for:
#   build-essential, bc, bison, flex, libelf-dev, libssl-dev, dwarves, cpio,
#   rsync, xz-utils, gcc-12: building the runner, test modules and kernels
#   ccache: kernel builds, one store for all trees (tools/kernel/build-kernel.sh)
#   qemu-system-x86, busybox-static, kmod, util-linux: the VM and its initramfs
#   autoconf, automake, libtool, pkgconf, liblzma-dev, libzstd-dev: the
#   guest's kmod, built static from Debian's source (tools/vm/build-kmod.sh)
#   apt-utils (apt-get download), dpkg: fetching Debian's kernel packages
#   python3, mypy, shellcheck, sparse: the project's own checks (mypy: the
#   KTAP reader, tools/ktap/ktap, typed --strict)
#   debootstrap: the check of README.md's commands on a fresh machine
readonly packages=(
	autoconf automake bc bison build-essential busybox-static ccache cpio debootstrap
	dwarves flex gcc-12 kmod libelf-dev liblzma-dev libssl-dev
	libtool libzstd-dev mypy pkgconf python3 qemu-system-x86 rsync shellcheck
	sparse util-linux xz-utils zstd
)
# With --lava, for make lava (tools/lava/lava.sh) only: lava-dispatcher
# (lava-run, lava_common's job schema) and what lava.py imports.  A heavy
# chain that make vm does not need: bookworm's lava-dispatcher 2023.01
# brings 134 packages (systemd-sysv, libguestfs and supermin, linux-headers,
# udev, ...; 53 MB to download, 212 MB installed, 3 minutes here).
readonly lava_packages=(lava-dispatcher python3-jinja2 python3-yaml)

usage()
{
	cat <<EOF
usage: $PROG [--lava] [--list] [--help]

Installs the Debian packages module_async needs on the host, if missing:
  ${packages[*]}
and with --lava (make lava) also:
  ${lava_packages[*]}

  --lava   the LAVA packages too
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
declare -A installed=()
while read -r pkg status; do
	[ "$status" != installed ] || installed[$pkg]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${wanted[@]}" 2>/dev/null || true)
missing=()
for pkg in "${wanted[@]}"; do
	[ -n "${installed[$pkg]:-}" ] || missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0
[ "$EUID" -eq 0 ] ||
	die "missing packages; as root run:"$'\n'"  apt-get update &&" \
		"apt-get install -y ${missing[*]}"

log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2 || die "apt-get update failed"
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
	die "apt-get install ${missing[*]} failed"
