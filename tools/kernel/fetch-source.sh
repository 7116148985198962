#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's kernel source package (linux-source-<x.y>) of the stock
# kernel's version, unpack its tarball once into the cache and print the
# tree's path: $CACHE/source/<debversion>/linux-source-<x.y>.
# Used for kselftest.h (standalone builds), kernel builds, checkpatch and
# kunit_parser.py.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--kver DEBVERSION]

Download linux-source-<x.y> with apt-get download, unpack its source tarball
into the cache and print the path of the source tree.

  --kver DEBVERSION  Debian package version (e.g. 6.1.192-3); default: \$KVER,
                     else the version linux-image-amd64 points to
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}
A complete entry is reused without network access.
EOF
}

kver=${KVER:-}
while [ $# -gt 0 ]; do
	case $1 in
	--kver) need_arg "$1" $#; kver=$2; shift 2 ;;
	--kver=*) kver=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -z "$kver" ] || check_debversion "$kver"

# The first step of a standalone build: the host's packages come first.
"$TOOLS/deps.sh" || die "missing packages"
need_cmd apt-cache apt-get dpkg-deb sha256sum flock tar xz

kver=$(stock_version "$kver")
[[ $kver =~ ^([0-9]+\.[0-9]+)\. ]] || die "unexpected kernel version '$kver'"
src=linux-source-${BASH_REMATCH[1]}

read -r pkg sha arch < <(deb_index "$kver" "$src") || true
[ "${pkg:-}" = "$src" ] ||
	die "package $src version $kver is not known to apt (see apt-cache madison $src)"
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
