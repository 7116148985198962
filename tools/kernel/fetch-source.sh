#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch one of Debian's kernel source packages (linux-source-<x.y>), unpack
# its tarball once into the cache and print the tree's path:
# $CACHE/source/<debversion>/linux-source-<x.y>.  Without options it is the
# source of the stock kernel's version in bookworm (the suite's reference,
# 6.1); --series picks another series of a release that carries it
# (tools/lib.sh's DEB_RELEASES: 7.2 is in sid, 6.12 in trixie and
# bookworm-backports), reached by tools/debian.sh's deb_release like
# fetch-kernel.sh's kernels.
# Used for kselftest.h (standalone builds), kernel builds, checkpatch and
# kunit_parser.py.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--dist RELEASE] [--series X.Y] [--kver DEBVERSION]

Download linux-source-<x.y> with apt-get download, unpack its source tarball
into the cache and print the path of the source tree.

  --dist RELEASE     the Debian release to take it from, one of:
                       $(deb_releases | paste -sd' ')
                     default: the first of them that carries the series,
                     else bookworm (not \$DIST: make vm DIST= names the
                     stock kernel, and the runner's kselftest.h comes from
                     here)
  --series X.Y       the source package linux-source-X.Y, X.Y one of:
                       $(deb_series | paste -sd' ')
                     default: the series of --kver, else of the version
                     linux-image-amd64 points to in RELEASE
  --kver DEBVERSION  Debian package version (e.g. 6.1.192-3); default: \$KVER,
                     else the version apt would install of linux-source-X.Y
                     (of linux-image-amd64 without --series)
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}
A complete entry is reused without network access.
EOF
}

dist=
series=
kver=${KVER:-}
while [ $# -gt 0 ]; do
	case $1 in
	--dist) need_arg "$1" $#; dist=$2; shift 2 ;;
	--dist=*) dist=${1#*=}; shift ;;
	--series) need_arg "$1" $#; series=$2; shift 2 ;;
	--series=*) series=${1#*=}; shift ;;
	--kver) need_arg "$1" $#; kver=$2; shift 2 ;;
	--kver=*) kver=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -z "$kver" ] || check_debversion "$kver"
if [ -n "$series" ]; then
	check_series "$series"
	if [ -n "$kver" ] && [[ $kver != "$series".* ]]; then
		usage_error "version $kver is not of series $series"
	fi
elif [[ $kver =~ ^([0-9]+\.[0-9]+)\. ]]; then
	series=${BASH_REMATCH[1]}
fi
if [ -z "$dist" ]; then
	dist=$(series_release "$series")
	dist=${dist:-bookworm}
fi
check_release "$dist"
cache_ready

# The first step of a standalone build: the host's packages come first.
"$TOOLS/deps.sh" || die "missing packages"
need_cmd apt-cache apt-get dpkg-deb sha256sum flock tar xz

deb_release "$dist"
if [ -z "$kver" ] && [ -n "$series" ]; then
	kver=$(deb_default_version "linux-source-$series")
	if [ -z "$kver" ] || [ "$kver" = "(none)" ]; then
		die "Debian $dist has no linux-source-$series" \
			"(see apt-cache madison linux-source-$series; give --dist)"
	fi
fi
kver=$(stock_version "$kver")
[[ $kver =~ ^([0-9]+\.[0-9]+)\. ]] || die "unexpected kernel version '$kver'"
src=linux-source-${BASH_REMATCH[1]}

read -r pkg sha arch < <(deb_index "$kver" "$src") || true
[ "${pkg:-}" = "$src" ] ||
	die "package $src version $kver is not known to apt in Debian $dist" \
		"(see apt-cache madison $src)"
stamp="$sha  ${src}_$kver"

cache=$(cache_dir)
entry=$cache/source/$kver
entry_lock "$entry"
if entry_valid "$entry" "$stamp"; then
	log "using cached $entry"
	printf '%s\n' "$entry/$src"
	exit 0
fi
if [ -e "$entry" ]; then
	log "$entry is incomplete or stale: rebuilding it"
fi
entry_remove "$entry"

deb=$(deb_fetch "$src" "$kver" "$sha" "$arch" "$cache/debs")

entry_tmp "$entry"
tmp=$ENTRY_TMP
log "unpacking $src.tar.xz"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$src.tar.xz" |
	tar -x -I 'xz -T0' -C "$tmp"
if [ ! -f "$tmp/$src/Makefile" ] || [ ! -f "$tmp/$src/kernel/async.c" ]; then
	die "$src.tar.xz did not unpack to a kernel tree in $src/"
fi

entry_commit "$entry" "$stamp"
log "source $src ($kver) ready"
printf '%s\n' "$entry/$src"
