#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's stock amd64 kernel of a release (image, headers, kbuild)
# into the cache, unpacked but not installed, and print the entry's path as
# the last line.
#
# The entry, $CACHE/stock/<release>/<debversion>/, holds:
#   vmlinuz              the kernel image
#   krel                 the kernel release, e.g. 6.1.0-57-amd64
#   lib/modules/<krel>/  the kernel's modules, with depmod's indexes
#   kdir                 a tree to build modules against, ready for
#                        make -C kdir KBUILD_EXTMOD=... (see below)
#   kdir.how             which tree kdir is and why
#   debs.sha256          the .debs it was unpacked from
#   .md5sums             their files' checksums (entry_verify in lib.sh)
# The packages are downloaded with apt-get download, which checks them against
# apt's signed indexes; the .debs are kept in $CACHE/debs/.  A release the
# machine's apt does not list is reached through a private apt configuration
# (deb_release in tools/debian.sh); the machine's own sources are never changed.
#
# The packages are found by what they are, not by version: the release is the
# one linux-image-amd64 depends on; the kernel's files come from its
# -unsigned image where Debian has one (5.10, 6.1, 6.12), else from the
# packages the image depends on (7.2: linux-binary-*, linux-modules-*,
# linux-base-*, all under a merged usr/lib/modules/<krel>/, moved here to
# lib/modules/<krel>/); the headers bring the -common headers and the kbuild
# package they depend on.
#
# kdir, one of two trees, decided from the packages' own Depends:
#   headers  Debian's linux-headers-<krel> as they are, when the compiler they
#            depend on (gcc-NN) is installed here and the kbuild host tools'
#            libc6 is satisfied: bookworm's 6.1 (gcc-12) and bookworm-
#            backports' 6.12 (gcc-12, libc6 >= 2.34).
#   source   otherwise linux-source-<x.y> of the same Debian version
#            (tools/fetch-source.sh), hard-linked into the entry and prepared
#            out of tree ("make olddefconfig modules_prepare" with this
#            machine's gcc, the host tools built from that source) with the
#            headers' .config and KERNELRELEASE=<krel>, then given the headers'
#            Module.symvers: bullseye's 5.10 (headers need gcc-10), trixie's
#            6.12 (gcc-14, libc6 >= 2.38) and sid's 7.2 (gcc-16, libc6 >=
#            2.38).  The same source, config and symbol versions as the stock
#            kernel; only the compiler differs, so the compiler-dependent
#            config symbols that olddefconfig changed are listed in
#            kdir.config-changes, and the entry is refused unless a module
#            built against kdir has the stock modules' vermagic.
# Compiler flags are never edited to make a tree fit.

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

Download Debian's stock amd64 kernel packages of a release (the image or the
packages it is made of, linux-headers-<krel>, the -common headers and kbuild
they depend on) with apt-get download, unpack them into the cache, make the
tree modules are built against and print the entry's path.

  --dist RELEASE     Debian release, one of:
                       $(deb_releases | paste -sd' ')
                     default: \$DIST, else bookworm
  --kver DEBVERSION  Debian package version (e.g. 6.1.192-3); default: \$KVER,
                     else the version linux-image-amd64 points to in RELEASE
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}
A complete entry is reused without network access.
EOF
}

dist=${DIST:-bookworm}
kver=${KVER:-}
while [ $# -gt 0 ]; do
	case $1 in
	--dist) need_arg "$1" $#; dist=$2; shift 2 ;;
	--dist=*) dist=${1#*=}; shift ;;
	--kver) need_arg "$1" $#; kver=$2; shift 2 ;;
	--kver=*) kver=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -z "$kver" ] || check_debversion "$kver"
check_release "$dist"
cache_ready

need_cmd apt-cache apt-get dpkg-deb sha256sum flock depmod modinfo make

# ---- which packages -------------------------------------------------------

deb_release "$dist"
cache=$(cache_dir)

# What apt's answers below resolve to (the version and the entry's stamp)
# is kept beside apt_cache's answers, keyed the same way (the apt state,
# installed packages included) and by the arguments and these scripts: a
# warm run checks its entry without asking apt again (0.5 s).  An entry
# that is not there, or not valid, takes the long way.
memo_key=$(printf '%s\0' "$APT_STATE" "$dist" "$kver" "$(id -u)" \
	"$(stat -c '%s %Y %n' "$0" "$TOOLS"/{lib,debian}.sh)" | sha256sum)
memo=$cache/apt-answers/fetch-kernel.${memo_key%% *}
if [ -n "$APT_STATE" ] && [ -f "$memo" ]; then
	mapfile -t lines <"$memo"
	entry=$cache/stock/$dist/${lines[0]:-}
	stamp=''
	for line in "${lines[@]:1}"; do
		stamp+=$line$'\n'
	done
	stamp=${stamp%$'\n'}
	if [ ${#lines[@]} -gt 1 ] && [ -n "${lines[0]}" ]; then
		entry_lock "$entry"
		if entry_valid "$entry" "$stamp" && [ -f "$entry/$ENTRY_SUMS" ]; then
			log "using cached $entry"
			printf '%s\n' "$entry"
			exit 0
		fi
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
	mapfile -t kernel_pkgs < <(deb_depends "$image" "$kver" '^linux-(binary|modules|base)-')
fi
[ "${#kernel_pkgs[@]}" -gt 0 ] ||
	die "$image=$kver has no -unsigned twin and is not made of" \
		"linux-binary/modules/base packages"
mapfile -t header_pkgs < <(deb_depends "$headers" "$kver" '^linux-(headers-.*-common|kbuild-.*)$')
common=$(printf '%s\n' "${header_pkgs[@]}" | grep -E '^linux-headers-.*-common$' || true)
kbuild=$(printf '%s\n' "${header_pkgs[@]}" | grep -E '^linux-kbuild-' || true)
if [ -z "$common" ] || [ -z "$kbuild" ]; then
	die "$headers=$kver does not depend on -common headers and a kbuild package"
fi
pkgs=("${kernel_pkgs[@]}" "$headers" "$common" "$kbuild")

# ---- which kdir: the headers as they are, or the source prepared here ---

# The compiler the headers depend on (gcc-NN, linux-compiler-gcc-NN-x86,
# gcc-NN-for-host) and the libc6 the kbuild host tools depend on.
cc_needed=$(deb_depends "$headers" "$kver" '^(linux-compiler-)?gcc-[0-9]+(-x86|-for-host)?$' |
	sed -E 's/^linux-compiler-//; s/-(x86|for-host)$//' | sed -n 1p)
libc_needed=$(deb_field "$kbuild" "$kver" Depends | tr ',' '\n' |
	sed -n 's/^ *libc6 (>= \([^)]*\)).*/\1/p' | sed -n 1p)
libc_here=$(dpkg-query -W -f '${Version}' libc6 2>/dev/null || true)
why=
if [ -n "$cc_needed" ] && ! command -v "$cc_needed" >/dev/null; then
	why="the headers need $cc_needed, not installed here"
fi
if [ -n "$libc_needed" ] &&
   { [ -z "$libc_here" ] || ! dpkg --compare-versions "$libc_here" ge "$libc_needed"; }; then
	why="${why:+$why; }$kbuild's host tools need libc6 >= $libc_needed,"
	why+=" this machine has ${libc_here:-none}"
fi
[ -n "$cc_needed" ] || log "$headers names no gcc-NN: assuming this machine's gcc"

# What the entry is made from: the index's sha256 of each .deb (and of the
# source package when kdir is prepared from it).
index=$(deb_index "$kver" "${pkgs[@]}")
stamp=
for pkg in "${pkgs[@]}"; do
	grep -q "^$pkg " <<<"$index" ||
		die "package $pkg version $kver is not known to apt (see apt-cache madison $pkg)"
	read -r _ sha _ < <(grep "^$pkg " <<<"$index")
	stamp+="$sha  ${pkg}_$kver"$'\n'
done
if [ -n "$why" ]; then
	[[ $kver =~ ^([0-9]+\.[0-9]+)\. ]] || die "unexpected kernel version '$kver'"
	source_pkg=linux-source-${BASH_REMATCH[1]}
	read -r pkg sha _ < <(deb_index "$kver" "$source_pkg") || true
	[ "${pkg:-}" = "$source_pkg" ] ||
		die "$why, and apt knows no $source_pkg=$kver to prepare instead"
	cc_here=$(gcc -dumpfullversion 2>/dev/null || echo unknown)
	stamp+="$sha  ${source_pkg}_$kver (kdir prepared by $cc_here)"$'\n'
fi
stamp=${stamp%$'\n'}
if [ -n "$APT_STATE" ]; then
	mkdir -p "${memo%/*}"
	printf '%s\n' "$kver" "$stamp" >"$memo.new.$$"
	mv "$memo.new.$$" "$memo"
fi

entry=$cache/stock/$dist/$kver

# entry_sums DEB...: the checksums of the entry's files, the packages' own
# (DEBIAN/md5sums) at the entry's paths: 7.2's modules moved out of usr/,
# and without the headers' Makefile, which is made here.
entry_sums()
{
	local deb

	for deb in "$@"; do
		dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./md5sums ||
			die "${deb##*/} has no md5sums"
	done | sed "s,^\([0-9a-f]\{32\}  \)usr/lib/modules/,\1lib/modules/," |
		grep -v "^[0-9a-f]\{32\}  usr/src/linux-headers-$krel/Makefile\$"
}

entry_lock "$entry"
valid=false
if entry_valid "$entry" "$stamp"; then
	valid=true
	# An entry made before it kept its packages' checksums takes them from
	# the .debs it was unpacked from, when they are still those.
	if [ ! -f "$entry/$ENTRY_SUMS" ] &&
	   (cd "$cache/debs" && sha256sum -c --quiet "$entry/debs.sha256" >/dev/null 2>&1); then
		log "adding its packages' checksums to $entry"
		mapfile -t debs < <(sed "s,^[0-9a-f]*  ,$cache/debs/," "$entry/debs.sha256")
		entry_sums "${debs[@]}" >"$entry/$ENTRY_SUMS.new"
		mv "$entry/$ENTRY_SUMS.new" "$entry/$ENTRY_SUMS"
	fi
fi
if $valid && [ -f "$entry/$ENTRY_SUMS" ]; then
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
if [ -n "$why" ]; then
	log "kdir from $source_pkg: $why"
	source_dir=$("$(dirname "$0")/fetch-source.sh" --kver "$kver" | tail -n 1) ||
		die "could not fetch $source_pkg=$kver"
fi

entry_tmp "$entry"
tmp=$ENTRY_TMP
for deb in "${debs[@]}"; do
	log "unpacking ${deb##*/}"
	dpkg-deb -x "$deb" "$tmp"
done
(cd "$cache/debs" && sha256sum "${debs[@]##*/}") >"$tmp/debs.sha256"
entry_sums "${debs[@]}" >"$tmp/$ENTRY_SUMS"

# ---- the layout -----------------------------------------------------------

mods=lib/modules/$krel
if [ -d "$tmp/usr/$mods" ]; then
	# Merged /usr (7.2): the module tree, vmlinuz, System.map and config.
	mkdir -p "$tmp/$mods"
	cp -a "$tmp/usr/$mods/." "$tmp/$mods/"
	rm -rf "${tmp:?}/usr/$mods"
fi
vmlinuz=
for f in "boot/vmlinuz-$krel" "$mods/vmlinuz"; do
	[ ! -f "$tmp/$f" ] || { vmlinuz=$f; break; }
done
sysmap=
for f in "boot/System.map-$krel" "$mods/System.map"; do
	[ ! -f "$tmp/$f" ] || { sysmap=$f; break; }
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

# prepare_source SOURCE: kdir from the kernel's source, prepared out of tree
# with the stock kernel's config and release; prints kdir's path in the
# entry.
prepare_source()
{
	local name=${1##*/} obj=usr/src/linux-prepared-$krel log uts

	log "preparing $name for $krel with $(gcc --version | head -n 1)"
	cp -al "$1" "$tmp/usr/src/$name" 2>/dev/null || cp -a "$1" "$tmp/usr/src/$name"
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

# check_vermagic KDIR: a module built against KDIR has the vermagic of the
# stock kernel's modules (so modprobe takes it as it is, never forced).
check_vermagic()
{
	local dir=$tmp/.vermagic want got stock

	stock=$(find "$tmp/$mods/kernel" -name 'null_blk.ko*' -print -quit)
	[ -n "$stock" ] || stock=$(find "$tmp/$mods/kernel" -name '*.ko*' -print -quit)
	want=$(modinfo -F vermagic "$stock")
	mkdir -p "$dir"
	printf '%s\n' '#include <linux/module.h>' 'MODULE_DESCRIPTION("vermagic probe");' \
		'MODULE_LICENSE("GPL");' >"$dir/ma_vermagic.c"
	echo 'obj-m := ma_vermagic.o' >"$dir/Makefile"
	make -C "$tmp/$1" KBUILD_EXTMOD="$dir" modules >"$dir/make.log" 2>&1 ||
		{ tail -n 20 "$dir/make.log" >&2; die "a module does not build against $1"; }
	got=$(modinfo -F vermagic "$dir/ma_vermagic.ko")
	[ "$got" = "$want" ] ||
		die "a module built against $1 has vermagic '$got', the stock modules '$want'"
	rm -rf "$dir"
}

if [ -n "$why" ]; then
	kdir=$(prepare_source "$source_dir")
	printf '%s %s %s (%s); %s config symbols changed (kdir.config-changes)\n' \
		"source: $source_pkg $kver prepared with the headers' .config and" \
		"Module.symvers by" "$(gcc --version | head -n 1)" "$why" \
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
[ -x "$tmp/kdir/scripts/basic/fixdep" ] || die "kbuild tools missing: no scripts/basic/fixdep"
[ -z "$why" ] || check_vermagic "$kdir"

entry_commit "$entry" "$stamp"
log "kernel $krel ($dist $kver) ready"
printf '%s\n' "$entry"
