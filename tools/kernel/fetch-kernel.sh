#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's stock amd64 kernel (image, headers, kbuild) into the cache,
# unpacked but not installed, and print the entry's path as the last line.
#
# The entry, $CACHE/stock/<debversion>/, holds:
#   vmlinuz              the kernel image
#   krel                 the kernel release, e.g. 6.1.0-57-amd64
#   lib/modules/<krel>/  the kernel's modules, with depmod's indexes
#   kdir                 the headers, ready for make -C kdir KBUILD_EXTMOD=...
#   debs.sha256          the .debs it was unpacked from
# The packages are downloaded with apt-get download, which checks them against
# apt's signed indexes; the .debs are kept in $CACHE/debs/.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--kver DEBVERSION]

Download Debian's stock amd64 kernel packages (linux-image-<abi>-amd64-unsigned,
linux-headers-<abi>-amd64, linux-headers-<abi>-common, linux-kbuild-<x.y>) with
apt-get download, unpack them into the cache and print the entry's path.

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

need_cmd apt-cache apt-get dpkg-deb sha256sum flock depmod

kver=$(stock_version "$kver")
abi=$(kernel_abi "$kver") ||
	die "no Debian amd64 kernel of version $kver is known to apt" \
		"(see apt-cache madison linux-image-amd64)"
krel=$abi-amd64
[[ $abi =~ ^([0-9]+\.[0-9]+)\. ]] || die "unexpected kernel ABI '$abi'"
pkgs=(
	"linux-image-$krel-unsigned"
	"linux-headers-$krel"
	"linux-headers-$abi-common"
	"linux-kbuild-${BASH_REMATCH[1]}"
)

# What the entry is made from: the index's sha256 of each .deb.
index=$(deb_index "$kver" "${pkgs[@]}")
stamp=
for pkg in "${pkgs[@]}"; do
	grep -q "^$pkg " <<<"$index" ||
		die "package $pkg version $kver is not known to apt (see apt-cache madison $pkg)"
	read -r _ sha _ < <(grep "^$pkg " <<<"$index")
	stamp+="$sha  ${pkg}_$kver"$'\n'
done
stamp=${stamp%$'\n'}

cache=$(cache_dir)
entry=$cache/stock/$kver
entry_lock "$entry"
if entry_valid "$entry" "$stamp"; then
	log "using cached $entry"
	printf '%s\n' "$entry"
	exit 0
fi
if [ -e "$entry" ]; then
	log "$entry is incomplete or stale: rebuilding it"
fi
entry_remove "$entry"

debs=()
while read -r pkg sha arch; do
	debs+=("$(deb_fetch "$pkg" "$kver" "$sha" "$arch" "$cache/debs")")
done <<<"$index"

entry_tmp "$entry"
tmp=$ENTRY_TMP
for deb in "${debs[@]}"; do
	log "unpacking ${deb##*/}"
	dpkg-deb -x "$deb" "$tmp"
done
(cd "$cache/debs" && sha256sum "${debs[@]##*/}") >"$tmp/debs.sha256"

hdr=usr/src/linux-headers-$krel
common=linux-headers-$abi-common
[ -f "$tmp/boot/vmlinuz-$krel" ] || die "no boot/vmlinuz-$krel in ${pkgs[0]}"
[ -f "$tmp/$hdr/Makefile" ] || die "no $hdr/Makefile in ${pkgs[1]}"
[ -f "$tmp/usr/src/$common/Makefile" ] || die "no usr/src/$common/Makefile in ${pkgs[2]}"

# The headers' Makefile includes the common headers by an absolute /usr/src
# path; include them relative to this Makefile instead, so the entry works
# wherever the cache is.
grep -qx "include /usr/src/$common/Makefile" "$tmp/$hdr/Makefile" ||
	die "$hdr/Makefile does not include /usr/src/$common/Makefile as expected"
printf '%s\n' "include \$(dir \$(lastword \$(MAKEFILE_LIST)))../$common/Makefile" \
	>"$tmp/$hdr/Makefile"

# build and source point at /usr/src: make them point into the entry.
ln -sfn "../../../$hdr" "$tmp/lib/modules/$krel/build"
ln -sfn "../../../usr/src/$common" "$tmp/lib/modules/$krel/source"

ln -s "boot/vmlinuz-$krel" "$tmp/vmlinuz"
ln -s "$hdr" "$tmp/kdir"
printf '%s\n' "$krel" >"$tmp/krel"

# Debian generates the module indexes at install time; so do we.
depmod -b "$tmp" -F "$tmp/boot/System.map-$krel" "$krel"
[ -s "$tmp/lib/modules/$krel/modules.dep" ] || die "depmod wrote no modules.dep"

# Every link the kernel build follows must stay inside the entry.
for link in "$tmp/kdir" "$tmp/kdir/scripts" "$tmp/kdir/tools" \
	    "$tmp/lib/modules/$krel/build" "$tmp/lib/modules/$krel/source"; do
	target=$(readlink -f "$link") || die "${link#"$tmp"/} does not resolve"
	case $target in
	"$tmp"/*) [ -e "$target" ] || die "${link#"$tmp"/} points to a missing $target" ;;
	*) die "${link#"$tmp"/} points outside the entry: $target" ;;
	esac
done
[ -x "$tmp/kdir/scripts/basic/fixdep" ] || die "kbuild tools missing: no scripts/basic/fixdep"

entry_commit "$entry" "$stamp"
log "kernel $krel ($kver) ready"
printf '%s\n' "$entry"
