#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh - Debian's stock amd64 kernel of a release unpacked into
# the cache (usage below): the entry $CACHE/stock/<release>/<debversion>/
# holds vmlinuz, krel, lib/modules/<krel>/ (depmod's indexes made here),
# kdir (make -C kdir KBUILD_EXTMOD=...), kdir.how (which tree, why),
# debs.sha256 and .md5sums (the packages' checksums, for entry_verify).
#
# The packages are found by what they are, not by version: the image is
# the one linux-image-amd64 depends on; the kernel's files come from its
# -unsigned twin where Debian has one (5.10, 6.1, 6.12), else from the
# packages it depends on (7.2: linux-binary-*, -modules-*, -base-*, their
# usr/lib/modules/<krel>/ moved to lib/modules/<krel>/); the headers bring
# the -common headers and kbuild.  kdir is decided from their Depends:
#   headers  linux-headers-<krel> as they are, where the gcc-NN they depend
#            on is installed and the kbuild host tools' libc6 satisfied
#            (bookworm's 6.1, bookworm-backports' 6.12);
#   source   else linux-source-<x.y> of that version (fetch-source.sh)
#            prepared out of tree with this machine's gcc, the headers'
#            .config and Module.symvers and KERNELRELEASE=<krel> (bullseye's
#            5.10, trixie's 6.12, sid's 7.2): the config symbols the
#            compiler changed are listed in kdir.config-changes, and the
#            entry is refused unless a module built against kdir has the
#            stock modules' vermagic.  Compiler flags are never edited.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--dist RELEASE] [--kver DEBVERSION]

Download Debian's stock amd64 kernel packages of a release with apt-get
download, unpack them into the cache, make the tree modules are built
against and print the entry's path.

  --dist RELEASE     Debian release, one of: $(deb_releases | paste -sd' ')
                     default: \$DIST, else bookworm
  --kver DEBVERSION  Debian package version (e.g. 6.1.192-3); default: \$KVER,
                     else the version linux-image-amd64 points to in RELEASE
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}
A complete entry is reused without network access.
EOF
}

# cached ENTRY STAMP: ENTRY, made from STAMP, is there, intact, with its
# checksums: printed, and the run is done.  ENTRY's lock stays held.
cached()
{
	entry_lock "$1"
	entry_valid "$1" "$2" && [ -f "$1/$ENTRY_SUMS" ] || return 0
	log "using cached $1"
	printf '%s\n' "$1"
	exit 0
}

# entry_sums KREL DEB...: the checksums of the entry's files, the packages'
# own (DEBIAN/md5sums) at the entry's paths: 7.2's modules moved out of
# usr/, and without the headers' Makefile, which is made here.
entry_sums()
{
	local deb

	for deb in "${@:2}"; do
		dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./md5sums ||
			die "${deb##*/} has no md5sums"
	done | sed "s,^\([0-9a-f]\{32\}  \)usr/lib/modules/,\1lib/modules/," |
		grep -v "^[0-9a-f]\{32\}  usr/src/linux-headers-$1/Makefile\$"
}

# config_changes OLD NEW: "SYMBOL OLD -> NEW" for each symbol whose value
# differs ("n" for unset, "-" for absent).
config_changes()
{
	awk 'FNR == 1 { f++ }
	     /^CONFIG_/ { i = index($0, "="); k = substr($0, 1, i - 1); v = substr($0, i + 1) }
	     /^# CONFIG_.* is not set$/ { k = $2; v = "n" }
	     !/^CONFIG_/ && !/^# CONFIG_.* is not set$/ { next }
	     f == 1 { a[k] = v; next }
	     { b[k] = v }
	     END {
		for (k in a)
			if (!(k in b)) print k, a[k], "->", "-"
			else if (a[k] != b[k]) print k, a[k], "->", b[k]
		for (k in b) if (!(k in a)) print k, "-", "->", b[k]
	     }' "$1" "$2" | sort
}

# prepare_source TMP SOURCE KREL HDR: kdir from the kernel's SOURCE,
# hard-linked into the entry TMP and prepared out of tree with the headers'
# (TMP/HDR) config and release KREL; prints its path in the entry.
prepare_source()
{
	local tmp=$1 name=${2##*/} krel=$3 hdr=$4 obj=usr/src/linux-prepared-$3 log uts

	log "preparing $name for $krel with $(gcc --version | head -n 1)"
	cp -al "$2" "$tmp/usr/src/$name" 2>/dev/null || cp -a "$2" "$tmp/usr/src/$name"
	mkdir -p "$tmp/$obj"
	cp "$tmp/$hdr/.config" "$tmp/$obj/.config"
	log=$tmp/$obj/prepare.log
	# KERNELRELEASE for the kernels that take it, KERNELVERSION and an empty
	# LOCALVERSION for 5.10's setlocalversion.
	if ! make -C "$tmp/usr/src/$name" O="$tmp/$obj" KERNELRELEASE="$krel" \
		KERNELVERSION="$krel" LOCALVERSION= olddefconfig >"$log" 2>&1 ||
	   ! make -C "$tmp/usr/src/$name" O="$tmp/$obj" KERNELRELEASE="$krel" \
		KERNELVERSION="$krel" LOCALVERSION= -j"$(nproc)" modules_prepare >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "modules_prepare of $name failed (log: $log)"
	fi
	uts=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$tmp/$obj/include/generated/utsrelease.h")
	[ "$uts" = "$krel" ] || die "$name prepared as release '$uts', not $krel"
	cp "$tmp/$hdr/Module.symvers" "$tmp/$obj/"
	config_changes "$tmp/$hdr/.config" "$tmp/$obj/.config" >"$tmp/kdir.config-changes"
	# The O= Makefile and source link name the temporary directory.
	printf '%s\n' "# $PROG: kbuild's O= Makefile, its paths made relative" \
		"export KBUILD_OUTPUT := \$(abspath $MAKEFILE_HERE)" \
		"include $MAKEFILE_HERE../$name/Makefile" >"$tmp/$obj/Makefile"
	ln -sfn "../$name" "$tmp/$obj/source"
	printf '%s\n' "$obj"
}

# check_vermagic TMP KDIR MODS: a module built against TMP/KDIR has the
# vermagic of the stock kernel's modules, TMP/MODS (so modprobe takes it as
# it is, never forced).
check_vermagic()
{
	local dir=$1/.vermagic want got stock

	stock=$(find "$1/$3/kernel" -name 'null_blk.ko*' -print -quit)
	[ -n "$stock" ] || stock=$(find "$1/$3/kernel" -name '*.ko*' -print -quit)
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

main()
{
	local dist=${DIST:-bookworm} kver=${KVER:-} cache memo memo_key lines stamp krel
	local image headers kernel_pkgs header_pkgs common kbuild pkgs cc_needed libc_needed
	local libc_here why='' index pkg sha arch source_dir='' entry debs tmp deb mods f
	local vmlinuz='' sysmap='' hdr kdir srclink link target

	while [ $# -gt 0 ]; do
		case $1 in
		--dist) need_arg "$1" $#; dist=$2 ;;
		--kver) need_arg "$1" $#; kver=$2 ;;
		-h|--help) usage; exit 0 ;;
		*) usage_error "unknown option '$1'" ;;
		esac
		shift 2
	done
	[ -z "$kver" ] || check_debversion "$kver"
	check_release "$dist"
	cache_ready
	need_cmd apt-cache apt-get dpkg-deb sha256sum flock depmod modinfo make
	deb_release "$dist"
	cache=$(cache_dir)

	# What apt's answers below resolve to (the version and the entry's
	# stamp) is kept beside apt_cache's answers, keyed the same way (the apt
	# state, installed packages included) and by the arguments and these
	# scripts: a warm run checks its entry without asking apt (0.5 s).  An
	# entry not there, or not valid, takes the long way.
	memo_key=$(printf '%s\0' "$APT_STATE" "$dist" "$kver" "$(id -u)" \
		"$(stat -c '%s %Y %n' "$0" "$TOOLS"/{lib,debian}.sh)" | sha256sum)
	memo=$cache/apt-answers/fetch-kernel.${memo_key%% *}
	if [ -n "$APT_STATE" ] && [ -f "$memo" ]; then
		mapfile -t lines <"$memo"
		if [ ${#lines[@]} -gt 1 ] && [ -n "${lines[0]}" ]; then
			cached "$cache/stock/$dist/${lines[0]}" "$(printf '%s\n' "${lines[@]:1}")"
			exec 9>&-
		fi
	fi

	kver=$(stock_version "$kver")
	krel=$(deb_kernel_release "$kver") ||
		die "no Debian amd64 kernel of version $kver is known to apt in $dist" \
			"(see apt-cache madison linux-image-amd64)"
	image=linux-image-$krel
	headers=linux-headers-$krel
	if [ -n "$(deb_field "$image-unsigned" "$kver" Package)" ]; then
		kernel_pkgs=("$image-unsigned")
	else
		mapfile -t kernel_pkgs < <(deb_depends "$image" "$kver" \
			'^linux-(binary|modules|base)-')
	fi
	[ "${#kernel_pkgs[@]}" -gt 0 ] ||
		die "$image=$kver has no -unsigned twin and is not made of" \
			"linux-binary/modules/base packages"
	header_pkgs=$(deb_depends "$headers" "$kver" '^linux-(headers-.*-common|kbuild-.*)$')
	common=$(grep -E '^linux-headers-.*-common$' <<<"$header_pkgs" || true)
	kbuild=$(grep -E '^linux-kbuild-' <<<"$header_pkgs" || true)
	if [ -z "$common" ] || [ -z "$kbuild" ]; then
		die "$headers=$kver does not depend on -common headers and a kbuild package"
	fi
	pkgs=("${kernel_pkgs[@]}" "$headers" "$common" "$kbuild")

	# Which kdir: the compiler the headers depend on (gcc-NN,
	# linux-compiler-gcc-NN-x86, gcc-NN-for-host) and the libc6 the kbuild
	# host tools depend on, against this machine's.
	cc_needed=$(deb_depends "$headers" "$kver" \
		'^(linux-compiler-)?gcc-[0-9]+(-x86|-for-host)?$' |
		sed -E 's/^linux-compiler-//; s/-(x86|for-host)$//' | sed -n 1p)
	libc_needed=$(deb_field "$kbuild" "$kver" Depends | tr ',' '\n' |
		sed -n 's/^ *libc6 (>= \([^)]*\)).*/\1/p' | sed -n 1p)
	libc_here=$(dpkg-query -W -f '${Version}' libc6 2>/dev/null || true)
	if [ -n "$cc_needed" ] && ! command -v "$cc_needed" >/dev/null; then
		why="the headers need $cc_needed, not installed here"
	fi
	if [ -n "$libc_needed" ] &&
	   ! dpkg --compare-versions "${libc_here:-0}" ge "$libc_needed"; then
		why="${why:+$why; }$kbuild's host tools need libc6 >= $libc_needed,"
		why+=" this machine has ${libc_here:-none}"
	fi
	[ -n "$cc_needed" ] || log "$headers names no gcc-NN: assuming this machine's gcc"

	# The stamp: the index's sha256 of each .deb, and the source's stamp
	# (its .deb's) when kdir is prepared from it.
	index=$(deb_index "$kver" "${pkgs[@]}")
	stamp=
	for pkg in "${pkgs[@]}"; do
		read -r _ sha _ < <(grep "^$pkg " <<<"$index") ||
			die "package $pkg version $kver is not known to apt" \
				"(see apt-cache madison $pkg)"
		stamp+="$sha  ${pkg}_$kver"$'\n'
	done
	if [ -n "$why" ]; then
		source_dir=$("$TOOLS/kernel/fetch-source.sh" --kver "$kver" | tail -n 1) ||
			die "$why, and no linux-source of $kver to prepare instead"
		stamp+="$(cat "${source_dir%/*}/.complete")"
		stamp+=" (kdir prepared by $(gcc -dumpfullversion 2>/dev/null || echo unknown))"
	fi
	stamp=${stamp%$'\n'}
	if [ -n "$APT_STATE" ]; then
		mkdir -p "${memo%/*}"
		printf '%s\n' "$kver" "$stamp" >"$memo.new.$$"
		mv "$memo.new.$$" "$memo"
	fi

	entry=$cache/stock/$dist/$kver
	cached "$entry" "$stamp"
	[ ! -e "$entry" ] || log "$entry is incomplete or stale: rebuilding it"
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
	entry_sums "$krel" "${debs[@]}" >"$tmp/$ENTRY_SUMS"

	mods=lib/modules/$krel
	if [ -d "$tmp/usr/$mods" ]; then
		# Merged /usr (7.2): the module tree, vmlinuz, System.map and config.
		mkdir -p "$tmp/$mods"
		cp -a "$tmp/usr/$mods/." "$tmp/$mods/"
		rm -rf "${tmp:?}/usr/$mods"
	fi
	for f in "boot/vmlinuz-$krel" "$mods/vmlinuz"; do
		[ -n "$vmlinuz" ] || [ ! -f "$tmp/$f" ] || vmlinuz=$f
	done
	for f in "boot/System.map-$krel" "$mods/System.map"; do
		[ -n "$sysmap" ] || [ ! -f "$tmp/$f" ] || sysmap=$f
	done
	hdr=usr/src/linux-headers-$krel
	[ -n "$vmlinuz" ] || die "no vmlinuz in ${kernel_pkgs[*]}"
	[ -n "$sysmap" ] || die "no System.map in ${kernel_pkgs[*]}"
	[ -d "$tmp/$mods/kernel" ] || die "no $mods/kernel/ in ${kernel_pkgs[*]}"
	[ -f "$tmp/$hdr/Makefile" ] || die "no $hdr/Makefile in $headers"
	[ -f "$tmp/usr/src/$common/Makefile" ] || die "no usr/src/$common/Makefile in $common"
	# The headers' Makefile, its /usr/src paths made relative to itself.
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

main "$@"
