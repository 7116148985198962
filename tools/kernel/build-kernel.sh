#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a small x86_64 kernel from one of Debian's linux-source packages
# (linux-source-6.1 by default, --src 7.2 for today's) for the suite's VM:
# the "vanilla" variant is the source as Debian ships it, the others add
# their patch series for the source's version,
# tools/kernel/patches/<variant>/<X.Y>/*.patch: "patched" the 3.8
# PF_USED_ASYNC flag forward-ported, "fixed" module init waiting only for
# the async work of its own load (patches/fixed/cover-letter).  Candidate
# patches (--patch) go on top, for a maintainer judging a fix.  --ksrc
# builds a kernel tree of one's own (a maintainer's) the same way, keyed by
# what the tree holds (ksrc_identity), the tree itself only read.
#
# The configuration is tinyconfig + the suite's "config" + the boot fragment
# tools/kernel/kconfig/boot.config; the build fails, naming the symbols, if any value
# asked for there did not survive "make olddefconfig".
#
# The entry, $CACHE/build/<debversion>-<variant>-<key>/, has the layout of
# tools/kernel/fetch-kernel.sh's entries:
#   vmlinuz              the kernel image (bzImage)
#   krel                 the kernel release, e.g. 6.1.192
#   lib/modules/<krel>/  the kernel's modules (make modules_install)
#   kdir                 the build tree, for make -C kdir KBUILD_EXTMOD=...
#   config, System.map   the kernel's .config and symbol map
#   build-id             vmlinux's GNU build ID, one line of hex, checked
#                        to be the one vmlinuz holds
# <key> is a short hash of the source version, the patches and the config.
#
# The build tree, $CACHE/build/tree/<debversion>-<variant>/ (for --ksrc,
# ksrc-<identity hash>-<variant>/), is kept between
# builds so that a rebuild compiles only what changed: src/ is a hard-linked
# copy of the unpacked source (.git left out) in which the patched files are
# replaced (never written in place) by new files, obj/ is the O= output
# directory.  Several
# entries share one tree, so an entry's kdir is the tree as last built: an
# entry is reused only while the tree still holds its build, else the tree is
# rebuilt (incrementally) for it.  Every tree compiles through one ccache
# store, $CACHE/ccache, where ccache is installed (see "build" below).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

# Bump when the way an entry is made changes, so old entries are rebuilt.
RECIPE=2

usage()
{
	cat <<EOF
Usage: $PROG --variant vanilla|patched|fixed|window [--patch FILE]... [--src X.Y]
       [--dist RELEASE] [--kver DEBVERSION] [--config FILE] [--source DIR]
       [--ksrc DIR] [--jobs N] [--verbose]

Build a kernel from Debian's linux-source-X.Y (tinyconfig + the suite's config
+ tools/kernel/kconfig/boot.config) out of tree, and print the path of the cache entry
(vmlinuz, krel, lib/modules/<krel>/, kdir) as the last line.

  --variant V        vanilla: the source as Debian ships it; patched, fixed,
                     window:
                     with tools/kernel/patches/V/<X.Y>/*.patch applied (in
                     order), X.Y the source's VERSION.PATCHLEVEL
  --patch FILE       apply FILE (patch -p1, no fuzz) after the variant's own
                     patches; repeatable, applied in the order given
  --src X.Y          the source series, linux-source-X.Y (6.1, 6.12, 7.2);
                     default: that of --kver, else 6.1 as
                     tools/kernel/fetch-source.sh picks it
  --dist RELEASE     the Debian release to take the source from (default:
                     the one that carries the series, see fetch-source.sh)
  --kver DEBVERSION  Debian version of linux-source-X.Y (e.g. 6.1.192-3);
                     default: \$KVER, else what tools/kernel/fetch-source.sh picks
  --config FILE      the suite's config fragment (default: the repository's
                     top-level config)
  --source DIR       use this unpacked source tree instead of running
                     tools/kernel/fetch-source.sh (it is only read, never modified)
  --ksrc DIR         a kernel tree of your own (not with --src, --dist, --kver,
                     --source): only read, built in a hard-linked copy (.git
                     left out) keyed by its content: for a git work tree its
                     HEAD, "git diff HEAD" and its untracked files, else
                     every file; the tree must be clean (no .config)
  --jobs N           parallel make jobs (default: nproc)
  --verbose          show make's output (default: only on failure; the full
                     log is in the build tree's make.log)
  --help             show this help

Cache: \${MODULE_ASYNC_CACHE:-\${XDG_CACHE_HOME:-\$HOME/.cache}/module_async}/build
An entry whose .complete stamp matches is reused without building.
EOF
}

variant=
kver=${KVER:-}
series=
dist=
config=
source_dir=
ksrc=
jobs=
verbose=false
extra_patches=()
while [ $# -gt 0 ]; do
	case $1 in
	--variant) need_arg "$1" $#; variant=$2; shift 2 ;;
	--variant=*) variant=${1#*=}; shift ;;
	--patch) need_arg "$1" $#; extra_patches+=("$2"); shift 2 ;;
	--patch=*) extra_patches+=("${1#*=}"); shift ;;
	--src) need_arg "$1" $#; series=$2; shift 2 ;;
	--src=*) series=${1#*=}; shift ;;
	--dist) need_arg "$1" $#; dist=$2; shift 2 ;;
	--dist=*) dist=${1#*=}; shift ;;
	--kver) need_arg "$1" $#; kver=$2; shift 2 ;;
	--kver=*) kver=${1#*=}; shift ;;
	--config) need_arg "$1" $#; config=$2; shift 2 ;;
	--config=*) config=${1#*=}; shift ;;
	--source) need_arg "$1" $#; source_dir=$2; shift 2 ;;
	--source=*) source_dir=${1#*=}; shift ;;
	--ksrc) need_arg "$1" $#; ksrc=$2; shift 2 ;;
	--ksrc=*) ksrc=${1#*=}; shift ;;
	--jobs) need_arg "$1" $#; jobs=$2; shift 2 ;;
	--jobs=*) jobs=${1#*=}; shift ;;
	--verbose) verbose=true; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done

[ -n "$variant" ] || usage_error "--variant is required"
is_source_variant "$variant" ||
	usage_error "bad variant '$variant' (one of: $SOURCE_VARIANTS)"
[ -z "$kver" ] || check_debversion "$kver"
if [ -n "$series" ]; then
	[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || usage_error "bad --src '$series' (X.Y, e.g. 7.2)"
	if [ -n "$kver" ] && [[ $kver != "$series".* ]]; then
		usage_error "version $kver is not of series $series"
	fi
fi
[ -z "$dist" ] || check_release "$dist"
if [ -n "$jobs" ]; then
	[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage_error "bad --jobs '$jobs'"
else
	jobs=$(nproc)
fi
if [ -n "$ksrc" ]; then
	[ -z "$series$dist$kver$source_dir" ] ||
		usage_error "--ksrc is a tree of your own:" \
			"not with --src, --dist, --kver or --source"
	why=$(ksrc_problem "$ksrc")
	[ -z "$why" ] || usage_error "--ksrc $ksrc: $why"
	source_dir=$ksrc
fi
: "${config:=$TOOLS/../config}"
fragment=$TOOLS/kernel/kconfig/boot.config
for f in "$config" "$fragment" ${extra_patches[@]+"${extra_patches[@]}"}; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		usage_error "cannot read '$f'"
	fi
done

need_cmd make gcc patch cmp sha256sum flock depmod readelf

# ---- the source ---------------------------------------------------------

if [ -n "$source_dir" ]; then
	if [ ! -f "$source_dir/Makefile" ] || [ ! -f "$source_dir/kernel/async.c" ]; then
		die "$source_dir is not an unpacked kernel source tree"
	fi
else
	[ -x "$TOOLS/kernel/fetch-source.sh" ] ||
		die "no $TOOLS/kernel/fetch-source.sh: give the source with --source DIR"
	source_dir=$("$TOOLS/kernel/fetch-source.sh" ${dist:+--dist "$dist"} \
		${series:+--series "$series"} ${kver:+--kver "$kver"} | tail -n 1)
	[ -f "$source_dir/Makefile" ] ||
		die "fetch-source.sh gave '$source_dir', which is no kernel source tree"
fi
source_dir=$(cd "$source_dir" && pwd)
# The series is the tree's own VERSION.PATCHLEVEL, whatever asked for it.
tree_series=$(awk '$1 == "VERSION" { v = $3 } $1 == "PATCHLEVEL" { p = $3 }
		   END { print v "." p }' "$source_dir/Makefile")
[[ $tree_series =~ ^[0-9]+\.[0-9]+$ ]] || die "no VERSION.PATCHLEVEL in $source_dir/Makefile"
if [ -n "$series" ] && [ "$series" != "$tree_series" ]; then
	die "$source_dir is linux $tree_series, not the --src $series asked for"
fi
series=$tree_series
# ksrc_identity: what the --ksrc tree holds, one line: for a git work tree
# (the tree its top) HEAD, the sha256 of "git diff HEAD --binary" (every
# change to a tracked file, staged or not) and of the untracked files git
# does not ignore, path and content; else the sha256 of every file's path
# and content (.git aside; 1.3 GB read, some seconds).  Only read: git with
# --no-optional-locks leaves the index as it is.
ksrc_identity()
{
	local head

	cd "$source_dir"
	if head=$(git rev-parse --verify -q HEAD 2>/dev/null) &&
	   [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
		printf 'git %s diff %s untracked %s\n' "$head" \
			"$(git --no-optional-locks diff HEAD --binary | sha256sum | cut -c1-64)" \
			"$(git --no-optional-locks ls-files -z --others --exclude-standard |
			   sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64)"
	else
		printf 'files %s\n' "$(find . -path ./.git -prune -o -type f -print0 |
			sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64)"
	fi
}

if [ -n "$ksrc" ]; then
	identity=$(ksrc_identity)
	log "$source_dir: $identity"
	kver=$(awk '$1 == "VERSION" { v = $3 } $1 == "PATCHLEVEL" { p = $3 }
		    $1 == "SUBLEVEL" { s = $3 } END { print v "." p "." s }' \
		"$source_dir/Makefile")-ksrc
	check_debversion "$kver"
elif [ -z "$kver" ]; then
	# fetch-source.sh unpacks into $CACHE/source/<debversion>/linux-source-*.
	case $source_dir in
	*/source/*/linux-source-*)
		kver=${source_dir%/linux-source-*}
		kver=${kver##*/}
		;;
	*)
		# Not from the cache: name it by the Makefile's version.
		kver=$(awk '$1 == "VERSION" { v = $3 } $1 == "PATCHLEVEL" { p = $3 }
			    $1 == "SUBLEVEL" { s = $3 } END { print v "." p "." s }' \
			"$source_dir/Makefile")-local
		;;
	esac
	check_debversion "$kver"
fi

# ---- what the entry is made from ------------------------------------------

# The stamp names a patch by its file name, not its directory: moving a
# series (into patches/patched/<X.Y>/, say) keeps the keys of the entries
# built before.
patches=()
if [ "$variant" != vanilla ]; then
	pdir=$TOOLS/kernel/patches/$variant
	for p in "$pdir/$series"/*.patch; do
		[ -f "$p" ] && patches+=("$p")
	done
	[ "${#patches[@]}" -gt 0 ] ||
		die "no patches in $pdir/$series for the $variant variant" \
			"of linux $series (the series there: $(cd "$pdir" && echo */ | tr -d /))"
fi
patches+=(${extra_patches[@]+"${extra_patches[@]}"})

# The stamp lists every input by content; the key is its short hash.
if [ -n "$ksrc" ]; then
	source_line="ksrc $identity"
else
	source_line="$kver $(cd "$source_dir" && sha256sum Makefile | cut -d' ' -f1)"
fi
stamp="module_async build-kernel recipe $RECIPE
source $source_line
variant $variant
config $(sha256sum <"$config" | cut -d' ' -f1)
fragment $(sha256sum <"$fragment" | cut -d' ' -f1)"
for p in ${patches[@]+"${patches[@]}"}; do
	stamp+=$'\n'"patch $(sha256sum <"$p" | cut -d' ' -f1) ${p##*/}"
done
key=$(printf '%s\n' "$stamp" | sha256sum | cut -c1-12)

cache=$(cache_dir)
entry=$cache/build/$kver-$variant-$key
tree=$cache/build/tree/$kver-$variant
[ -z "$ksrc" ] ||
	tree=$cache/build/tree/ksrc-$(printf '%s\n' "$identity" | sha256sum | cut -c1-12)-$variant

# One builder per tree: entries of a tree share its src/ and obj/.
entry_lock "$tree"
if entry_valid "$entry" "$stamp" && [ -f "$tree/key" ] &&
   [ "$(cat "$tree/key")" = "$key" ]; then
	log "using cached $entry"
	printf '%s\n' "$entry"
	exit 0
fi
entry_remove "$entry"

STAGE=
cleanup()
{
	entry_tmp_cleanup
	[ -z "$STAGE" ] || rm -rf "$STAGE"
}
trap cleanup EXIT

# ---- the build tree -------------------------------------------------------

if [ ! -d "$tree/src" ]; then
	log "making the build tree $tree"
	rm -rf "$tree.new"
	mkdir -p "$tree.new/src"
	# Hard links cost no space; every later change replaces a file.  No
	# .git: what git would say of the copy is not the source's to say.
	if ! (cd "$source_dir" && find . -mindepth 1 -maxdepth 1 ! -name .git -print0 |
	      xargs -0 cp -al -t "$tree.new/src/") 2>/dev/null; then
		log "cannot hard-link the source (another file system?): copying it"
		rm -rf "$tree.new/src"
		mkdir -p "$tree.new/src"
		(cd "$source_dir" && find . -mindepth 1 -maxdepth 1 ! -name .git -print0 |
		 xargs -0 cp -a -t "$tree.new/src/")
	fi
	: >"$tree.new/patched-files"
	rm -rf "$tree"
	mv "$tree.new" "$tree"
fi
# patch_paths PATCH: the files a -p1 patch names (old and new names).
patch_paths()
{
	awk '
	function strip(p) {
		sub(/\t.*/, "", p)
		if (p == "/dev/null")
			return ""
		sub(/^[^\/]*\//, "", p)
		return p
	}
	/^(rename|copy) (from|to) / { print substr($0, index($0, $3)); next }
	/^\+\+\+ / && prev ~ /^--- / {
		a = strip(substr(prev, 5)); b = strip(substr($0, 5))
		if (a != "") print a
		if (b != "") print b
	}
	{ prev = $0 }' "$1" | sort -u
}

# failed_hunks PATCH OUTPUT: for each "Hunk #N FAILED" in patch(1)'s output,
# the file, the hunk's @@ line in PATCH and where patch looked for it.
failed_hunks()
{
	local file="" line n at

	while IFS= read -r line; do
		case $line in
		"patching file "*|"checking file "*)
			file=${line#* file }
			file=${file#\'}
			file=${file%\'}
			;;
		"Hunk #"*" FAILED"*)
			n=${line#Hunk #}
			n=${n%% *}
			at=${line##* FAILED}
			at=${at%.}
			printf '  %s: hunk #%s %s FAILED%s\n' "$file" "$n" \
				"$(awk -v f="$file" -v n="$n" '
				/^\+\+\+ / { p = $2; sub(/\t.*/, "", p)
					     sub(/^[^\/]*\//, "", p); c = 0 }
				/^@@ / && p == f && ++c == n { print; exit }' "$2")" "$at"
			;;
		esac
	done <<<"$1"
}

# Apply the patches to copies of the files they touch, in a scratch
# directory: a patch that does not apply leaves the tree as it was.
STAGE=$(mktemp -d "$tree/stage.XXXXXX")
mapfile -t wanted < <(for p in ${patches[@]+"${patches[@]}"}; do patch_paths "$p"; done | sort -u)
for f in ${wanted[@]+"${wanted[@]}"}; do
	case $f in
	/*|../*|*/../*) die "patch names a path outside the tree: $f" ;;
	esac
	if [ -f "$source_dir/$f" ]; then
		mkdir -p "$STAGE/${f%/*}"
		cp "$source_dir/$f" "$STAGE/$f"
	fi
done
for p in ${patches[@]+"${patches[@]}"}; do
	log "applying ${p##*/}"
	if ! out=$(patch -p1 --batch --forward --fuzz=0 --no-backup-if-mismatch \
			 -r - -d "$STAGE" -i "$(cd "$(dirname "$p")" && pwd)/${p##*/}" 2>&1); then
		printf '%s\n' "$out" | sed 's/^/  | /' >&2
		hunks=$(failed_hunks "$out" "$p")
		[ -z "$hunks" ] || printf '%s\n' "$hunks" >&2
		die "patch $p does not apply to linux-source $kver" \
			"(applied in order: ${patches[*]##*/}); the build tree is unchanged"
	fi
done

# The tree is about to change: no entry's kdir matches it until it is built.
tree_changes()
{
	rm -f "$tree/key"
}

# Bring src/ to the patched state: replace each file the patches touch now or
# touched last time whose content differs, so make sees a newer file and
# rebuilds only what depends on it.
mapfile -t previous <"$tree/patched-files"
# If this is interrupted, the next run must still visit every file.
printf '%s\n' ${wanted[@]+"${wanted[@]}"} ${previous[@]+"${previous[@]}"} |
	sort -u >"$tree/patched-files"
changed=0
while IFS= read -r f; do
	[ -n "$f" ] || continue
	if [ -f "$STAGE/$f" ]; then
		want=$STAGE/$f
	elif printf '%s\n' ${wanted[@]+"${wanted[@]}"} | grep -qxF -- "$f"; then
		want=		# deleted (or renamed away) by a patch
	elif [ -f "$source_dir/$f" ]; then
		want=$source_dir/$f
	else
		want=		# created by an earlier patch only
	fi
	have=$tree/src/$f
	if [ -z "$want" ]; then
		if [ -e "$have" ]; then
			tree_changes
			rm -f "$have"
			changed=$((changed + 1))
			log "removed $f"
		fi
	elif [ ! -f "$have" ] || ! cmp -s "$want" "$have"; then
		tree_changes
		mkdir -p "$(dirname "$have")"
		cp "$want" "$have.ma-new"
		mv -f "$have.ma-new" "$have"
		changed=$((changed + 1))
		log "updated $f"
	fi
done < <(printf '%s\n' ${wanted[@]+"${wanted[@]}"} ${previous[@]+"${previous[@]}"} | sort -u)
printf '%s\n' ${wanted[@]+"${wanted[@]}"} >"$tree/patched-files"
rm -rf "$STAGE"
STAGE=
log "$changed source file(s) changed since the last build of this tree"

# ---- configuration --------------------------------------------------------

export KBUILD_BUILD_USER=module_async KBUILD_BUILD_HOST=build-kernel
# A fixed version string, "#1 <debversion> <variant> <key>" in uname -v, that
# names the build and keeps a rebuild without changes from relinking.  (The
# _VERSION_TIMESTAMP is Debian's; others take the fixed date instead.)
export KBUILD_BUILD_VERSION=1
export KBUILD_BUILD_VERSION_TIMESTAMP="$kver $variant $key"
KBUILD_BUILD_TIMESTAMP=$(date -u -R -d "@$(stat -c %Y "$source_dir/Makefile")")
export KBUILD_BUILD_TIMESTAMP

src=$tree/src
obj=$tree/obj
mkdir -p "$obj" "$tree/kconfig"
: >"$tree/make.log"

run_make()
{
	if $verbose; then
		make -C "$src" "$@" 2>&1 | tee -a "$tree/make.log" >&2
	else
		make -C "$src" "$@" >>"$tree/make.log" 2>&1
	fi
}

fail_make()
{
	$verbose || tail -n 40 "$tree/make.log" | sed 's/^/  | /' >&2
	die "$1 failed (full log: $tree/make.log)"
}

# Values asked for by both fragments must agree.
conflicts=$(cat "$config" "$fragment" |
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)/\1 \2/p' \
	       -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 n/p' |
	sort -u | awk '{ n[$1]++ } n[$1] == 2 { print $1 }')
[ -z "$conflicts" ] || die "$config and $fragment disagree on: $conflicts"

# The configuration is made in a scratch output directory, so obj/.config
# changes (and make rebuilds) only when the result differs.  It depends on
# the fragments and the Kconfig files: made again only when they change.
kc=$tree/kconfig
kc_inputs=$(
	printf '%s\n' "$stamp" | grep -v '^patch '
	for f in ${wanted[@]+"${wanted[@]}"}; do
		case $f in
		*Kconfig*|*configs/*|scripts/kconfig/*)
			[ ! -f "$src/$f" ] || sha256sum "$src/$f" ;;
		esac
	done
)
if [ -f "$kc/.config" ] && [ -f "$kc/inputs" ] &&
   [ "$(cat "$kc/inputs")" = "$kc_inputs" ]; then
	log "configuration inputs unchanged"
else
	log "configuring: tinyconfig + ${config##*/} + ${fragment##*/}"
	rm -f "$kc/inputs"
	run_make O="$kc" tinyconfig || fail_make "make tinyconfig"
	(cd "$kc" && "$src/scripts/kconfig/merge_config.sh" -m -O "$kc" \
		"$kc/.config" "$config" "$fragment") \
		>>"$tree/make.log" 2>&1 || fail_make "merge_config.sh"
	run_make O="$kc" olddefconfig || fail_make "make olddefconfig"
fi

# kconfig_where SYMBOL: where SYMBOL is defined (for x86) and what it
# depends on.
kconfig_where()
{
	# shellcheck disable=SC2016 # awk's own $1, $2
	find "$src" \( -path "$src/arch/*" ! -path "$src/arch/x86*" -prune \) -o \
		-name 'Kconfig*' -type f -print0 |
		xargs -0 awk -v sym="$1" -v src="$src/" '
		FNR == 1 { inside = 0 }
		$1 ~ /^(menu)?config$/ { inside = ($2 == sym) }
		inside && $1 ~ /^(menu)?config$/ {
			f = FILENAME; sub(src, "", f)
			printf "      %s:%d\n", f, FNR
		}
		inside && $1 == "depends" { sub(/^[ \t]*/, ""); print "      " $0 }'
}

# Every value asked for must have survived olddefconfig.  merge_config.sh
# has a check of its own, but (in 6.1) it only warns, exits 0, and checks
# tinyconfig's lines too; this one fails, names each symbol lost with where
# it is defined and what it depends on, and checks only the fragments.
lost=
for f in "$config" "$fragment"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			sym=${line%%=*}
			grep -qxF -- "$line" "$kc/.config" && continue
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -q "^$sym=" "$kc/.config" || continue
			;;
		*) continue ;;
		esac
		got=$(grep -E "^($sym=|# $sym is not set)" "$kc/.config" || true)
		lost+="  $line (from ${f##*/}): got ${got:-nothing}"$'\n'
		lost+=$(kconfig_where "${sym#CONFIG_}")$'\n'
	done <"$f"
done
if [ -n "$lost" ]; then
	printf '%s' "$lost" >&2
	die "these config values did not survive make olddefconfig;" \
		"add what they depend on (to search: make -C $src O=$kc menuconfig, then /)"
fi
printf '%s\n' "$kc_inputs" >"$kc/inputs"
if [ -f "$obj/.config" ] && cmp -s "$kc/.config" "$obj/.config"; then
	log "configuration unchanged"
else
	tree_changes
	cp "$kc/.config" "$obj/.config"
fi

# ---- build ----------------------------------------------------------------

# Compiles go through ccache when it is installed, its store shared by every
# tree: CCACHE_BASEDIR makes the trees' paths relative (the object files hold
# none: kbuild maps __FILE__ with -fmacro-prefix-map), so another variant of a
# source already built, or a --ksrc copy of it, compiles only what its patches
# change.  Depend mode: a compile ccache has not seen runs once, its inputs
# taken from the compiler's own dependency file (-MMD) instead of a second
# preprocessor run (a cold build 10%, not 45%, slower here).  ccache checks
# each result's checksum when it reads it.
#
# A compile with an input outside the dependency file never comes from the
# store: a source whose text holds ".incbin" (piggy.S, the boot wrapper's
# compressed vmlinux; realmode's rmpiggy.S, usr/initramfs_data.S, 7.2's
# sbat.S, kernel/configs.c) goes to gcc itself, through the wrapper
# tools/kernel/ccache-cc.  Keyed on piggy.S's text, which names only the
# payload's sizes, ccache gave two kernels whose compressed images were the
# same size one piggy.o, the first one's: the boot image held an older
# kernel.  ccache (4.7) refuses .incbin only in its preprocessor mode, whose
# second preprocessor run every compile would pay; the wrapper costs a grep
# a compile (no header of 6.1 or 7.2 holds .incbin, which the grep of the
# source alone would miss).  It is run from the tree under
# a name made of its checksum: a changed wrapper changes kbuild's command
# line, and kbuild compiles again what it compiled.
cc=()
if command -v ccache >/dev/null; then
	wrapper=$TOOLS/kernel/ccache-cc
	ccwrap=$tree/ccache-cc.$(sha256sum <"$wrapper" | cut -c1-12)
	if [ ! -x "$ccwrap" ]; then
		rm -f "$tree"/ccache-cc.*
		cp "$wrapper" "$ccwrap.new"
		chmod +x "$ccwrap.new"
		mv "$ccwrap.new" "$ccwrap"
	fi
	cc=(CC="$ccwrap")
	export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tree CCACHE_MAXSIZE=4G
	export CCACHE_DEPEND=true
	export CCACHE_STATSLOG=$tree/ccache.stats MA_CC_BYPASS_LOG=$tree/ccache.bypassed
	: >"$CCACHE_STATSLOG"
	: >"$MA_CC_BYPASS_LOG"
else
	log "no ccache: every compile runs (deps.sh installs it)"
fi
log "building bzImage and modules with $jobs jobs (log: $tree/make.log)"
start=$SECONDS
run_make O="$obj" -j"$jobs" ${cc[@]+"${cc[@]}"} bzImage modules ||
	fail_make "make bzImage modules"
hits=''
if [ ${#cc[@]} -gt 0 ]; then
	# The stats log: one line a counter a compile, e.g. direct_cache_hit.
	hit=$(grep -c '_cache_hit$' "$CCACHE_STATSLOG" || true)
	all=$(grep -c -e '_cache_hit$' -e '^cache_miss$' "$CCACHE_STATSLOG" || true)
	hits=", $hit of $all compiles from ccache ($CCACHE_DIR)"
	bypassed=$(wc -l <"$MA_CC_BYPASS_LOG")
	[ "$bypassed" -eq 0 ] || hits+=", $bypassed past it (.incbin)"
fi
log "built in $((SECONDS - start)) s$hits"
krel=$(cat "$obj/include/config/kernel.release")
[ -n "$krel" ] || die "no kernel release in $obj/include/config/kernel.release"

entry_tmp "$entry"
trap cleanup EXIT
tmp=$ENTRY_TMP
run_make O="$obj" INSTALL_MOD_PATH="$tmp" modules_install ||
	fail_make "make modules_install"
[ -s "$tmp/lib/modules/$krel/modules.dep" ] || die "modules_install wrote no modules.dep"
# The image that will boot holds the vmlinux just linked (kernel_image_check
# in lib.sh: their build IDs), else nothing of this build is trusted.  Its
# boot wrapper is removed so that the next build makes it again.
if ! build_id=$(kernel_image_check "$obj/arch/x86/boot/bzImage" "$obj/vmlinux" \
		"$src/scripts/extract-vmlinux"); then
	tree_changes
	rm -rf "$obj/arch/x86/boot"
	die "arch/x86/boot/bzImage does not hold the vmlinux just linked" \
		"(a stale object in the boot wrapper?): $entry not made;" \
		"its boot wrapper removed from $obj, to be made again"
fi
cp "$obj/arch/x86/boot/bzImage" "$tmp/vmlinuz"
printf '%s\n' "$build_id" >"$tmp/build-id"
cp "$obj/.config" "$tmp/config"
cp "$obj/System.map" "$tmp/System.map"
printf '%s\n' "$krel" >"$tmp/krel"
ln -s "$obj" "$tmp/kdir"

# What a run loads is checked against these (entry_verify).
mapfile -t kos < <(cd "$tmp" && find lib/modules -name '*.ko*' -type f | LC_ALL=C sort)
entry_sum vmlinuz "${kos[@]}"
printf '%s\n' "$key" >"$tree/key"
entry_commit "$entry" "$stamp"
log "kernel $krel ($kver, $variant) ready"
printf '%s\n' "$entry"
