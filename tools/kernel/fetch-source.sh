#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-source.sh - one of Debian's kernel source packages,
# linux-source-<x.y>, its tarball unpacked once into the cache; prints the
# tree's path, $CACHE/source/<debversion>/linux-source-<x.y>.  Without
# options the source of bookworm's stock kernel (the suite's reference,
# 6.1); --series picks another, from the first release of lib.sh's
# DEB_RELEASES that carries it, reached by debian.sh's deb_release.  For
# kselftest.h (standalone builds), kernel builds, checkpatch, kunit_parser.py.

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
                     default: the first of them that carries the series, else
                     bookworm (not \$DIST, which names make vm's stock kernel)
  --series X.Y       linux-source-X.Y, X.Y one of: $(deb_series | paste -sd' ')
                     default: the series of --kver, else of the version
                     linux-image-amd64 points to in RELEASE
  --kver DEBVERSION  Debian package version (e.g. 6.1.192-3); default: \$KVER,
                     else the version apt would install
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}
A complete entry is reused without network access.
EOF
}

main()
{
	local dist='' series='' kver=${KVER:-} src pkg sha arch stamp entry deb

	while [ $# -gt 0 ]; do
		case $1 in
		--dist) need_arg "$1" $#; dist=$2 ;;
		--series) need_arg "$1" $#; series=$2 ;;
		--kver) need_arg "$1" $#; kver=$2 ;;
		-h|--help) usage; exit 0 ;;
		*) usage_error "unknown option '$1'" ;;
		esac
		shift 2
	done
	[ -z "$kver" ] || check_debversion "$kver"
	if [ -n "$series" ]; then
		check_series "$series"
		[ -z "$kver" ] || [[ $kver == "$series".* ]] ||
			usage_error "version $kver is not of series $series"
	elif [[ $kver =~ ^([0-9]+\.[0-9]+)\. ]]; then
		series=${BASH_REMATCH[1]}
	fi
	[ -n "$dist" ] || dist=$(series_release "$series")
	dist=${dist:-bookworm}
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

	entry=$(cache_dir)/source/$kver
	entry_lock "$entry"
	if entry_valid "$entry" "$stamp"; then
		log "using cached $entry"
		printf '%s\n' "$entry/$src"
		exit 0
	fi
	[ ! -e "$entry" ] || log "$entry is incomplete or stale: rebuilding it"
	entry_remove "$entry"
	deb=$(deb_fetch "$src" "$kver" "$sha" "$arch" "$(cache_dir)/debs")
	entry_tmp "$entry"
	log "unpacking $src.tar.xz"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$src.tar.xz" |
		tar -x -I 'xz -T0' -C "$ENTRY_TMP"
	if [ ! -f "$ENTRY_TMP/$src/Makefile" ] || [ ! -f "$ENTRY_TMP/$src/kernel/async.c" ]; then
		die "$src.tar.xz did not unpack to a kernel tree in $src/"
	fi
	entry_commit "$entry" "$stamp"
	log "source $src ($kver) ready"
	printf '%s\n' "$entry/$src"
}

main "$@"
