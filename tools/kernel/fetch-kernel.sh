#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh - Debian's stock amd64 kernel unpacked into the cache,
# $CACHE/stock/<release>/<debversion>/: vmlinuz, krel, lib/modules/<krel>/,
# kdir (make -C kdir KBUILD_EXTMOD=...), kdir.how, .md5sums.
# As fetch-source.sh (a link to it): linux-source-<x.y>'s tarball unpacked,
# $CACHE/source/<debversion>/linux-source-<x.y>/.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"

usage()
{
	cat <<EOF
Usage: fetch-kernel.sh [--dist RELEASE] [--kver DEBVERSION]
       fetch-source.sh [--dist RELEASE] [--series X.Y] [--kver DEBVERSION]

Download Debian's stock amd64 kernel or linux-source-X.Y with apt-get,
unpack it into the cache (reused offline) and print its path.

  --dist RELEASE     $(deb_releases | paste -sd' ')
                     (default: \$DIST, else bookworm; the source's: the series' first)
  --series X.Y       $(deb_series | paste -sd' ') (default: --kver's, else the kernel's)
  --kver DEBVERSION  package version (default: \$KVER, else apt's candidate)
  --help             show this help
EOF
}

# cached ENTRY STAMP [PATH]: ENTRY (locked) made from STAMP has PATH (else its
# checksums): ENTRY/PATH printed, the run done.
cached()
{
	entry_lock "$1"
	entry_valid "$1" "$2" && [ -e "$1/${3:-$ENTRY_SUMS}" ] || return 0
	log "using cached $1"
	printf '%s\n' "$1${3:+/$3}"
	exit 0
}

# stock_version [DEBVERSION]: DEBVERSION, else linux-image-amd64's candidate.
stock_version()
{
	deb_version linux-image-amd64 "${1:-}" ||
		die "apt knows no linux-image-amd64 (is this Debian? run apt-get update)"
}

# fetch_source DIST SERIES KVER: the source tree, printed; SERIES by default
# KVER's, DIST the first release carrying SERIES.
fetch_source()
{
	local dist=$1 series=$2 kver=$3 src index sha arch stamp entry deb

	[ -n "$series" ] || [[ ! $kver =~ ^([0-9]+\.[0-9]+)\. ]] || series=${BASH_REMATCH[1]}
	[ -n "$dist" ] || dist=$(series_release "$series")
	dist=${dist:-bookworm}
	"$TOOLS/deps.sh" || die "missing packages"
	need_cmd apt-cache apt-get dpkg-deb sha256sum flock tar xz
	deb_release "$dist"
	if [ -n "$series" ]; then
		kver=$(deb_version "linux-source-$series" "$kver") ||
			die "Debian $dist has no linux-source-$series" \
				"(see apt-cache madison linux-source-$series; give --dist)"
	fi
	kver=$(stock_version "$kver")
	[[ $kver =~ ^([0-9]+\.[0-9]+)\. ]] || die "unexpected kernel version '$kver'"
	src=linux-source-${BASH_REMATCH[1]}
	index=$(deb_index "$kver" "$src")
	read -r _ sha arch <<<"$index"
	stamp="$sha  ${src}_$kver"
	entry=$(cache_dir)/source/$kver
	cached "$entry" "$stamp" "$src"
	[ ! -e "$entry" ] || log "$entry is incomplete or stale: rebuilding it"
	entry_remove "$entry"
	deb=$(deb_fetch "$src" "$kver" "$sha" "$arch" "$(cache_dir)/debs")
	entry_tmp "$entry"
	# tar says how far it is each 100 MB unpacked.
	log "unpacking $src.tar.xz (about 1.3 GB)"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$src.tar.xz" |
		tar -x -I 'xz -T0' -C "$ENTRY_TMP" --checkpoint=10000 \
			--checkpoint-action='echo=%{r}T unpacked'
	if [ ! -f "$ENTRY_TMP/$src/Makefile" ] || [ ! -f "$ENTRY_TMP/$src/kernel/async.c" ]; then
		die "$src.tar.xz did not unpack to a kernel tree in $src/"
	fi
	entry_commit "$entry" "$stamp"
	log "source $src ($kver) ready"
	printf '%s\n' "$entry/$src"
}

# prepare_source TMP SOURCE KREL HDR: kdir, SOURCE prepared in the entry TMP
# with the headers' (TMP/HDR) config as release KREL; prints its path.
prepare_source()
{
	local tmp=$1 name=${2##*/} krel=$3 hdr=$4 obj=usr/src/linux-prepared-$3 log uts
	local kmake=(make -C "$tmp/usr/src/$name" O="$tmp/$obj" KERNELRELEASE="$krel"
		KERNELVERSION="$krel" LOCALVERSION=)	# the last two for 5.10's setlocalversion

	log "preparing $name for $krel with $(gcc --version | head -n 1)"
	cp -al "$2" "$tmp/usr/src/$name" 2>/dev/null || cp -a "$2" "$tmp/usr/src/$name"
	mkdir -p "$tmp/$obj"
	cp "$tmp/$hdr/.config" "$tmp/$obj/.config"
	log=$tmp/$obj/prepare.log
	if ! "${kmake[@]}" olddefconfig >"$log" 2>&1 ||
	   ! "${kmake[@]}" -j"$(nproc)" modules_prepare >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "modules_prepare of $name failed (log: $log)"
	fi
	uts=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$tmp/$obj/include/generated/utsrelease.h")
	[ "$uts" = "$krel" ] || die "$name prepared as release '$uts', not $krel"
	cp "$tmp/$hdr/Module.symvers" "$tmp/$obj/"
	"$2/scripts/diffconfig" "$tmp/$hdr/.config" "$tmp/$obj/.config" \
		>"$tmp/kdir.config-changes"
	# The O= Makefile and source link name the temporary directory.
	printf '%s\n' "# $PROG: kbuild's O= Makefile, its paths made relative" \
		"export KBUILD_OUTPUT := \$(abspath $MAKEFILE_HERE)" \
		"include $MAKEFILE_HERE../$name/Makefile" >"$tmp/$obj/Makefile"
	ln -sfn "../$name" "$tmp/$obj/source"
	printf '%s\n' "$obj"
}

# check_vermagic TMP KDIR MODS: a module built against TMP/KDIR has the
# vermagic of the stock modules TMP/MODS (modprobe takes it, never forced).
check_vermagic()
{
	local dir=$1/.vermagic want got stock

	stock=$(find "$1/$3/kernel" -name '*.ko*' -print -quit)
	want=$(modinfo -F vermagic "$stock")
	mkdir -p "$dir"
	printf '%s\n' '#include <linux/module.h>' 'MODULE_DESCRIPTION("vermagic probe");' \
		'MODULE_LICENSE("GPL");' >"$dir/ma_vermagic.c"
	echo 'obj-m := ma_vermagic.o' >"$dir/Makefile"
	make -C "$1/$2" KBUILD_EXTMOD="$dir" modules >"$dir/make.log" 2>&1 ||
		{ tail -n 20 "$dir/make.log" >&2; die "a module does not build against $2"; }
	got=$(modinfo -F vermagic "$dir/ma_vermagic.ko")
	[ "$got" = "$want" ] ||
		die "a module built against $2 has vermagic '$got', the stock modules '$want'"
	rm -rf "$dir"
}

# fetch_kernel DIST KVER: the stock kernel's entry, printed.
fetch_kernel()
{
	local dist=$1 kver=$2 cache memo stamp krel image headers kernel_pkgs
	local common kbuild pkgs cc_needed libc_needed libc_here why='' index pkg
	local sha arch source_dir='' entry tmp deb mods vmlinuz sysmap hdr kdir
	local srclink link target

	need_cmd apt-cache apt-get dpkg-deb sha256sum flock depmod modinfo make
	deb_release "$dist"
	cache=$(cache_dir)
	# The resolution's result, kept: a warm run asks apt nothing.
	if memo=$(apt_memo fetch-kernel "$dist" "$kver" "$(id -u)" \
		"$(stat -c '%s %Y %n' "$0" "$TOOLS"/{lib,debian}.sh)") && [ -f "$memo" ]; then
		cached "$cache/stock/$dist/$(sed -n 1p "$memo")" "$(sed 1d "$memo")"
		exec 9>&-
	fi

	kver=$(stock_version "$kver")
	krel=$(deb_kernel_release "$kver") ||
		die "no Debian amd64 kernel of version $kver is known to apt in $dist" \
			"(see apt-cache madison linux-image-amd64)"
	image=linux-image-$krel
	headers=linux-headers-$krel
	# The image's files: its -unsigned twin's, else 7.2's binary/modules/base.
	if [ -n "$(deb_field "$image-unsigned" "$kver" Package)" ]; then
		kernel_pkgs=("$image-unsigned")
	else
		mapfile -t kernel_pkgs < <(deb_depends "$image" "$kver" \
			'^linux-(binary|modules|base)-')
	fi
	[ "${#kernel_pkgs[@]}" -gt 0 ] ||
		die "$image=$kver has no -unsigned twin and is not made of" \
			"linux-binary/modules/base packages"
	common=$(deb_depends "$headers" "$kver" '^linux-headers-.*-common$')
	kbuild=$(deb_depends "$headers" "$kver" '^linux-kbuild-')
	if [ -z "$common" ] || [ -z "$kbuild" ]; then
		die "$headers=$kver does not depend on -common headers and a kbuild package"
	fi
	pkgs=("${kernel_pkgs[@]}" "$headers" "$common" "$kbuild")

	# kdir: the headers as they are if the gcc-NN they depend on is here and
	# the kbuild host tools' libc6 satisfied; else (why) linux-source of that
	# version prepared with this gcc, compiler flags never edited.
	cc_needed=$(deb_depends "$headers" "$kver" \
		'^(linux-compiler-)?gcc-[0-9]+(-x86|-for-host)?$' |
		sed -E 's/^linux-compiler-//; s/-(x86|for-host)$//' | sed -n 1p)
	libc_needed=$(deb_field "$kbuild" "$kver" Depends | tr ',' '\n' |
		sed -n 's/^ *libc6 (>= \([^)]*\)).*/\1/p' | sed -n 1p)
	libc_here=$(dpkg-query -W -f '${Version}' libc6 2>/dev/null || true)
	[ -z "$cc_needed" ] || command -v "$cc_needed" >/dev/null ||
		why="the headers need $cc_needed, not installed here; "
	[ -z "$libc_needed" ] || dpkg --compare-versions "${libc_here:-0}" ge "$libc_needed" ||
		why+="$kbuild's host tools need libc6 >= $libc_needed, here ${libc_here:-none}"
	why=${why%; }
	[ -n "$cc_needed" ] || log "$headers names no gcc-NN: assuming this machine's gcc"

	# The stamp: each .deb's sha256, and the source's if kdir is made of it.
	index=$(deb_index "$kver" "${pkgs[@]}")
	stamp=$(awk -v v="$kver" '{ print $2 "  " $1 "_" v }' <<<"$index")
	if [ -n "$why" ]; then
		source_dir=$(fetch_source '' '' "$kver" | tail -n 1) ||
			die "$why, and no linux-source of $kver to prepare instead"
		stamp+=$'\n'"$(cat "${source_dir%/*}/.complete")"
		stamp+=" (kdir prepared by $(gcc -dumpfullversion 2>/dev/null || echo unknown))"
	fi
	[ -z "$memo" ] || memo_keep "$memo" "$kver" "$stamp"

	entry=$cache/stock/$dist/$kver
	cached "$entry" "$stamp"
	[ ! -e "$entry" ] || log "$entry is incomplete or stale: rebuilding it"
	entry_remove "$entry"
	entry_tmp "$entry"
	tmp=$ENTRY_TMP
	# Each package unpacked, its md5sums at the entry's paths but the headers'
	# Makefile's (rewritten below).
	while read -r pkg sha arch; do
		deb=$(deb_fetch "$pkg" "$kver" "$sha" "$arch" "$cache/debs")
		log "unpacking ${deb##*/}"
		dpkg-deb -x "$deb" "$tmp"
		dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./md5sums ||
			die "${deb##*/} has no md5sums"
	done <<<"$index" | sed "s,^\([0-9a-f]\{32\}  \)usr/lib/modules/,\1lib/modules/," |
		grep -v "^[0-9a-f]\{32\}  usr/src/$headers/Makefile\$" >"$tmp/$ENTRY_SUMS"

	mods=lib/modules/$krel
	if [ -d "$tmp/usr/$mods" ]; then	# merged /usr (7.2)
		mkdir -p "$tmp/$mods"
		cp -a "$tmp/usr/$mods/." "$tmp/$mods/"
		rm -rf "${tmp:?}/usr/$mods"
	fi
	# The image and its map in boot/, or (7.2) in lib/modules/<krel>/.
	vmlinuz=boot/vmlinuz-$krel sysmap=boot/System.map-$krel
	[ -f "$tmp/$vmlinuz" ] || vmlinuz=$mods/vmlinuz sysmap=$mods/System.map
	hdr=usr/src/linux-headers-$krel
	[ -f "$tmp/$vmlinuz" ] || die "no vmlinuz in ${kernel_pkgs[*]}"
	[ -f "$tmp/$sysmap" ] || die "no System.map in ${kernel_pkgs[*]}"
	[ -d "$tmp/$mods/kernel" ] || die "no $mods/kernel/ in ${kernel_pkgs[*]}"
	[ -f "$tmp/$hdr/Makefile" ] || die "no $hdr/Makefile in $headers"
	[ -f "$tmp/usr/src/$common/Makefile" ] || die "no usr/src/$common/Makefile in $common"
	headers_makefile "$headers" "$common" <"$tmp/$hdr/Makefile" >"$tmp/$hdr/Makefile.new"
	mv "$tmp/$hdr/Makefile.new" "$tmp/$hdr/Makefile"

	if [ -n "$why" ]; then
		kdir=$(prepare_source "$tmp" "$source_dir" "$krel" "$hdr")
		printf '%s %s %s (%s); %s config symbols changed (kdir.config-changes)\n' \
			"source: ${source_dir##*/} $kver prepared with the headers' .config" \
			"and Module.symvers by" "$(gcc --version | head -n 1)" "$why" \
			"$(wc -l <"$tmp/kdir.config-changes")" >"$tmp/kdir.how"
		srclink=usr/src/${source_dir##*/}
	else
		kdir=$hdr
		printf 'headers: %s %s as they are (%s, %s host tools for libc6 >= %s)\n' \
			"$headers" "$kver" "${cc_needed:-gcc}" "$kbuild" "${libc_needed:-?}" \
			>"$tmp/kdir.how"
		srclink=usr/src/$common
	fi
	log "kdir: $(cat "$tmp/kdir.how")"
	# build and source point at /usr/src: make them point into the entry.
	ln -sfn "../../../$kdir" "$tmp/$mods/build"
	ln -sfn "../../../$srclink" "$tmp/$mods/source"
	ln -s "$vmlinuz" "$tmp/vmlinuz"
	ln -s "$kdir" "$tmp/kdir"
	printf '%s\n' "$krel" >"$tmp/krel"
	# Debian generates the module indexes at install time; so do we.
	depmod -b "$tmp" -F "$tmp/$sysmap" "$krel"
	[ -s "$tmp/$mods/modules.dep" ] || die "depmod wrote no modules.dep"

	# Every link the kernel build follows must stay inside the entry.
	for link in "$tmp/kdir" "$tmp/kdir/scripts" "$tmp/kdir/tools" \
		    "$tmp/$mods/build" "$tmp/$mods/source"; do
		target=$(readlink -f "$link") || die "${link#"$tmp"/} does not resolve"
		case $target in
		"$tmp"/*) [ -e "$target" ] || die "${link#"$tmp"/} points to a missing $target" ;;
		*) die "${link#"$tmp"/} points outside the entry: $target" ;;
		esac
	done
	[ -x "$tmp/kdir/scripts/basic/fixdep" ] ||
		die "kbuild tools missing: no scripts/basic/fixdep"
	[ -z "$why" ] || check_vermagic "$tmp" "$kdir" "$mods"
	entry_commit "$entry" "$stamp"
	log "kernel $krel ($dist $kver) ready"
	printf '%s\n' "$entry"
}

dist='' series='' kver=${KVER:-}
while [ $# -gt 0 ]; do
	case $1 in
	--dist | --series | --kver) need_arg "$1" $#; printf -v "${1#--}" %s "$2" ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift 2
done
[ -z "$kver" ] || check_debversion "$kver"
if [ -n "$series" ]; then
	[ "$PROG" = fetch-source.sh ] || usage_error "--series is fetch-source.sh's"
	check_series "$series"
	[ -z "$kver" ] || [[ $kver == "$series".* ]] ||
		usage_error "version $kver is not of series $series"
fi
# $DIST names make vm's stock kernel, not the source's release.
[ "$PROG" = fetch-source.sh ] || dist=${dist:-${DIST:-bookworm}}
[ -z "$dist" ] || check_release "$dist"
cache_ready
if [ "$PROG" = fetch-source.sh ]; then
	fetch_source "$dist" "$series" "$kver"
else
	fetch_kernel "$dist" "$kver"
fi
