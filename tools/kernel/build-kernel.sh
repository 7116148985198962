#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh - a small x86_64 kernel for the suite's VM, built out of
# tree into $CACHE/build/<debversion>-<variant>-<key>/ (<key> a hash of its
# stamp).  One build tree a source, $CACHE/build/tree/<debversion>/, serves
# every variant and patch, so that a build compiles only what differs from
# the last one: src/ a hard-linked copy of the source whose patched files
# are replaced, never written in place; obj/ the O= directory.  An entry
# holds what a module build needs of both (kdir/, src/), so that a later
# build of the tree changes no entry.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly RECIPE=4	# bumped when the way an entry is made changes
readonly CONFIG=$TOP/config FRAGMENT=$TOOLS/kernel/kconfig/boot.config

usage()
{
	cat <<EOF
Usage: $PROG --variant VARIANT [--patch FILE]... [--src X.Y] [--dist RELEASE]
       [--kver DEBVERSION] [--source DIR] [--ksrc DIR]

Build a kernel (tinyconfig + config + kconfig/boot.config) from Debian's
linux-source-X.Y out of tree and print its cache entry's path.

  --variant V        $SOURCE_VARIANTS (but vanilla: with patches/V/<X.Y>/*)
  --patch FILE       FILE too (-p1, no fuzz), after the variant's; repeatable, in order
  --src, --dist, --kver   fetch-source.sh's --series, --dist, --kver
  --source DIR       an unpacked source tree instead (only read)
  --ksrc DIR         a clean kernel tree of your own, keyed by its content (only read)
  --help             show this help
EOF
}

# makefile_version DIR N: the first N of the tree DIR's VERSION.PATCHLEVEL.SUBLEVEL.
makefile_version()
{
	awk -v n="$2" '$1 == "VERSION" { v[1] = $3 } $1 == "PATCHLEVEL" { v[2] = $3 }
		$1 == "SUBLEVEL" { v[3] = $3 }
		END { s = v[1]; for (i = 2; i <= n; i++) s = s "." v[i]; print s }' "$1/Makefile"
}

# ksrc_identity DIR: what the --ksrc tree DIR holds, one line: a git work
# tree's HEAD, changes and untracked files, else every file (some seconds).
ksrc_identity()
{
	local head

	cd "$1"
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

# entry_stamp VARIANT SOURCE CONFIG FRAGMENT PATCH...: what the entry is made
# from, by content; a patch by its file name, not its directory (a series
# moved keeps its keys).
entry_stamp()
{
	local p

	printf 'module_async build-kernel recipe %s\nsource %s\nvariant %s\n' "$RECIPE" "$2" "$1"
	printf 'config %s\nfragment %s\n' "$(sha256sum <"$3" | cut -d' ' -f1)" \
		"$(sha256sum <"$4" | cut -d' ' -f1)"
	for p in "${@:5}"; do
		printf 'patch %s %s\n' "$(sha256sum <"$p" | cut -d' ' -f1)" "${p##*/}"
	done
}

# new_tree SOURCE TREE: TREE/src a copy of SOURCE (hard links if it can), no .git.
new_tree()
{
	local how

	log "making the build tree $2"
	for how in -al -a; do
		rm -rf "$2.new"
		mkdir -p "$2.new/src"
		(cd "$1" && find . -mindepth 1 -maxdepth 1 ! -name .git -print0 |
			xargs -0 cp "$how" -t "$2.new/src/") 2>/dev/null && break
		[ "$how" = -al ] || die "cannot copy $1 into $2"
		log "cannot hard-link the source: copying it"
	done
	: >"$2.new/patched-files"
	rm -rf "$2"
	mv "$2.new" "$2"
}

# patch_tree TREE SOURCE KVER PATCH...: the files PATCHes name now or named
# last time (TREE/patched-files), patched in a scratch copy of SOURCE's,
# replace TREE/src's where they differ.
patch_tree()
{
	local tree=$1 source=$2 kver=$3 stage p out wanted changes

	shift 3
	# One builder per tree (main's lock): a scratch copy left by a killed one goes.
	stage=$tree/stage
	rm -rf "$stage" "$stage.files"
	mkdir "$stage"
	# git apply --numstat -z: "ADDED\tDELETED\tPATH" or, renamed, "...\t\0OLD\0NEW".
	wanted=$(for p; do git apply --numstat -z "$p" | tr '\0' '\n' |
		awk -F'\t' 'NF == 3 && $3 != "" { print $3 } NF == 1 && $0 != ""'; done | sort -u)
	sort -u - "$tree/patched-files" <<<"$wanted" | sed '/^$/d' >"$stage.files"
	! grep -E '^/|^\.\./|/\.\./' "$stage.files" || die "a patch names a path outside the tree"
	rsync -a --files-from="$stage.files" --ignore-missing-args "$source/" "$stage/"
	for p; do
		log "applying ${p##*/}"
		out=$(patch -p1 --batch --forward --fuzz=0 --no-backup-if-mismatch -r - \
			-d "$stage" -i "$(cd "$(dirname "$p")" && pwd)/${p##*/}" 2>&1) && continue
		printf '%s\n' "$out" | sed 's/^/  | /' >&2
		die "patch $p does not apply to linux-source $kver" \
			"(applied in order: ${*##*/}); the build tree is unchanged"
	done
	# If this is interrupted, the next run must still visit every file.
	cp "$stage.files" "$tree/patched-files"
	# Files replaced (written anew, never in place), or removed.
	changes=$(rsync -rc --files-from="$stage.files" --delete-missing-args -i \
		"$stage/" "$tree/src/" | grep -E '^(>f|\*deleting)' || true)
	printf '%s\n' "$wanted" >"$tree/patched-files"
	rm -rf "$stage" "$stage.files"
	log "$(grep -c . <<<"$changes") source file(s) changed since the last build" \
		"of this tree${changes:+:$'\n'$changes}"
}

# run_make TREE ARGS...: make in TREE/src, its output in TREE/make.log.
run_make()
{
	make -C "$1/src" "${@:2}" >>"$1/make.log" 2>&1 || fail_make "$1" "make ${*: -1}"
}

# fail_make TREE WHAT: die, with make.log's tail.
fail_make()
{
	tail -n 40 "$1/make.log" | sed 's/^/  | /' >&2
	die "$2 failed (full log: $1/make.log)"
}

# configure TREE STAMP: TREE/obj/.config from tinyconfig, CONFIG, FRAGMENT,
# made again in TREE/kconfig when STAMP but its variant and patches, or a
# Kconfig file patched, changes.
configure()
{
	local tree=$1 kc=$1/kconfig inputs f lost

	inputs=$(
		printf '%s\n' "$2" | grep -Ev '^(patch|variant) '
		while IFS= read -r f; do
			case $f in
			*Kconfig*|*configs/*|scripts/kconfig/*)
				[ ! -f "$tree/src/$f" ] || sha256sum "$tree/src/$f" ;;
			esac
		done <"$tree/patched-files"
	)
	mkdir -p "$kc"
	if [ -f "$kc/.config" ] && [ "$(cat "$kc/inputs" 2>/dev/null)" = "$inputs" ]; then
		log "configuration inputs unchanged"
	else
		log "configuring: tinyconfig + ${CONFIG##*/} + ${FRAGMENT##*/}"
		rm -f "$kc/inputs"
		run_make "$tree" O="$kc" tinyconfig
		(cd "$kc" && "$tree/src/scripts/kconfig/merge_config.sh" -m -O "$kc" \
			"$kc/.config" "$CONFIG" "$FRAGMENT") >>"$tree/make.log" 2>&1 ||
			fail_make "$tree" "merge_config.sh"
		run_make "$tree" O="$kc" olddefconfig
	fi
	# Each value of the fragments lost (merge_config.sh only warns).
	lost=$(awk 'FNR == 1 { f++ }
		/^CONFIG_/ { sym = substr($0, 1, index($0, "=") - 1) }
		/^# CONFIG_.* is not set$/ { sym = $2 }
		f == 1 { if (/^CONFIG_/) got[sym] = $0; next }
		!/^CONFIG_/ && !/^# CONFIG_.* is not set$/ { next }
		{ have = sym in got ? got[sym] : "" }
		/^CONFIG_/ && have != $0 || /^# / && have != "" {
			print "  " $0 " (from " FILENAME "): got " (have == "" ? "nothing" : have)
		}' "$kc/.config" "$CONFIG" "$FRAGMENT")
	if [ -n "$lost" ]; then
		printf '%s\n' "$lost" >&2
		die "these config values did not survive make olddefconfig; add what they" \
			"depend on (to find it: make -C $tree/src O=$kc menuconfig, then /)"
	fi
	printf '%s\n' "$inputs" >"$kc/inputs"
	if cmp -s "$kc/.config" "$tree/obj/.config"; then
		log "configuration unchanged"
	else
		cp "$kc/.config" "$tree/obj/.config"
	fi
}

# progress TREE TOTAL: make's output, read as it comes, into TREE/make.log;
# its compiles counted (of about TOTAL if not empty) on stderr: in place on
# a terminal, else a line a minute.
progress()
{
	local line n=0 said=$SECONDS what

	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$1/make.log"
		[[ $line == '  CC '* || $line == '  AS '* ]] || continue
		n=$((n + 1))
		what="$PROG: building: $n ${2:+of about $2 }objects compiled,"
		what+=" $((SECONDS - start)) s"
		if [ -t 2 ]; then
			printf '\r%s' "$what" >&2
		elif [ $((SECONDS - said)) -ge 60 ]; then
			printf '%s\n' "$what" >&2
			said=$SECONDS
		fi
	done
	[ ! -t 2 ] || [ "$n" -eq 0 ] || printf '\n' >&2
	printf '%s\n' "$n" >"$1/compiled"
}

# compile TREE CACHE SERIES: bzImage and modules in TREE/obj, through
# ccache-cc if ccache is here, whose name holds its checksum: a new one
# compiles all again.  A build into an empty obj/ records its count of
# compiles for SERIES, the total the next such build is told against.
compile()
{
	local tree=$1 cc=() ccwrap hit all bypassed hits='' start=$SECONDS total=''
	local counted=$2/build/objects-$3 fresh=0 rc=0

	if command -v ccache >/dev/null; then
		ccwrap=$tree/ccache-cc.$(sha256sum <"$TOOLS/kernel/ccache-cc" | cut -c1-12)
		if [ ! -x "$ccwrap" ]; then
			rm -f "$tree"/ccache-cc.*
			install -m 755 "$TOOLS/kernel/ccache-cc" "$ccwrap.new"
			mv "$ccwrap.new" "$ccwrap"
		fi
		cc=(CC="$ccwrap")
		export CCACHE_DIR=$2/ccache CCACHE_BASEDIR=$tree CCACHE_MAXSIZE=4G
		export CCACHE_DEPEND=true
		export CCACHE_STATSLOG=$tree/ccache.stats MA_CC_BYPASS_LOG=$tree/ccache.bypassed
		: >"$CCACHE_STATSLOG"
		: >"$MA_CC_BYPASS_LOG"
	else
		log "no ccache: every compile runs (deps.sh installs it)"
	fi
	log "building bzImage and modules with $(nproc) jobs (log: $tree/make.log)"
	if [ -z "$(find "$tree/obj" -name '*.o' -print -quit)" ]; then
		fresh=1
		total=$(cat "$counted" 2>/dev/null) || true
	fi
	# Not the flags of a make that runs us (make -s vm): kbuild's lines are counted.
	env -u MAKEFLAGS -u MFLAGS make -C "$tree/src" O="$tree/obj" -j"$(nproc)" \
		${cc[@]+"${cc[@]}"} bzImage modules 2>&1 | progress "$tree" "$total" || rc=$?
	[ "$rc" -eq 0 ] || fail_make "$tree" "make modules"
	[ "$fresh" -eq 0 ] || cp "$tree/compiled" "$counted"
	if [ ${#cc[@]} -gt 0 ]; then
		# The stats log: one line a counter a compile, e.g. direct_cache_hit.
		hit=$(grep -c '_cache_hit$' "$CCACHE_STATSLOG" || true)
		all=$(grep -c -e '_cache_hit$' -e '^cache_miss$' "$CCACHE_STATSLOG" || true)
		hits=", $hit of $all compiles from ccache ($CCACHE_DIR)"
		bypassed=$(wc -l <"$MA_CC_BYPASS_LOG")
		[ "$bypassed" -eq 0 ] || hits+=", $bypassed past it (.incbin)"
	fi
	log "built in $((SECONDS - start)) s$hits"
}

# kdir_copy TREE TMP ENTRY: in TMP (ENTRY once committed) what a module
# build needs of TREE: kdir/, of obj/, copied (make writes objects in
# place); src/, of the source, hard links where it can (files are replaced,
# never written in place).  A later build of the tree changes neither.
kdir_copy()
{
	local tree=$1 tmp=$2 inc

	(cd "$tree/src" && { find . arch/x86 -maxdepth 1 -name 'Makefile*' -type f
		find include scripts arch/x86/include \( -type f -o -type l \); } |
		cpio -pdml --quiet "$tmp/src") || die "cannot copy the headers of $tree/src"
	(cd "$tree/obj" && { printf '%s\n' .config Module.symvers vmlinux
		find tools/objtool/objtool -maxdepth 0 2>/dev/null || true
		find include scripts arch/x86/include -type f; } |
		cpio -pdm --quiet "$tmp/kdir") || die "cannot copy the build of $tree/obj"
	# O='s Makefile includes the source's: the entry's own. Since 6.13 it
	# also exports KBUILD_OUTPUT, the tree's obj/: the entry's kdir/ (left
	# naming the tree, an external module is built against whatever the
	# tree holds by then, and its objects land in kdir/).
	inc="include $3/src/Makefile"
	sed -e "s|^include .*/Makefile\$|$inc|" \
		-e "s|^export KBUILD_OUTPUT = .*|export KBUILD_OUTPUT = $3/kdir|" \
		"$tree/obj/Makefile" >"$tmp/kdir/Makefile"
	grep -qxF "$inc" "$tmp/kdir/Makefile" || die "$tree/obj/Makefile includes no Makefile"
	! grep -v "^#" "$tmp/kdir/Makefile" | grep -F "$tree" ||
		die "$tmp/kdir/Makefile still names $tree"
	ln -s ../src "$tmp/kdir/source"
}

# make_entry TREE ENTRY STAMP: the entry of TREE's build, refused unless the
# image holds the vmlinux just linked (their build IDs).
make_entry()
{
	local obj=$1/obj tmp krel build_id kos

	krel=$(cat "$obj/include/config/kernel.release")
	[ -n "$krel" ] || die "no kernel release in $obj/include/config/kernel.release"
	entry_tmp "$2"
	tmp=$ENTRY_TMP
	run_make "$1" O="$obj" INSTALL_MOD_PATH="$tmp" modules_install
	[ -s "$tmp/lib/modules/$krel/modules.dep" ] || die "modules_install wrote no modules.dep"
	if ! build_id=$(kernel_image_check "$obj/arch/x86/boot/bzImage" "$obj/vmlinux" \
			"$1/src/scripts/extract-vmlinux"); then
		rm -rf "$obj/arch/x86/boot"
		die "arch/x86/boot/bzImage does not hold the vmlinux just linked" \
			"(a stale object in the boot wrapper?): $2 not made;" \
			"its boot wrapper removed from $obj, to be made again"
	fi
	cp "$obj/arch/x86/boot/bzImage" "$tmp/vmlinuz"
	printf '%s\n' "$build_id" >"$tmp/build-id"
	cp "$obj/.config" "$tmp/config"
	cp "$obj/System.map" "$tmp/System.map"
	printf '%s\n' "$krel" >"$tmp/krel"
	printf '%s\n' "$1" >"$tmp/tree"
	kdir_copy "$1" "$tmp" "$2"
	ln -sfn ../../../kdir "$tmp/lib/modules/$krel/build"
	ln -sfn ../../../src "$tmp/lib/modules/$krel/source"
	# What a run loads is checked against these (entry_verify).
	mapfile -t kos < <(cd "$tmp" && find lib/modules -name '*.ko*' -type f | LC_ALL=C sort)
	entry_sum vmlinuz "${kos[@]}"
	entry_commit "$2" "$3"
	log "kernel $krel ready: ${2##*/}"
}

main()
{
	local variant='' kver=${KVER:-} src='' dist='' source='' ksrc='' patches=() extra=()
	local p series identity='' source_line stamp key cache entry tree

	while [ $# -gt 0 ]; do
		case $1 in
		--variant | --src | --dist | --kver | --source | --ksrc)
			need_arg "$1" $#; printf -v "${1#--}" %s "$2" ;;
		--patch)
			[[ -f ${2:-} && -r $2 ]] || usage_error "cannot read '${2:-}'"
			extra+=("$2")
			;;
		-h|--help) usage; exit 0 ;;
		*) usage_error "unknown option '$1'" ;;
		esac
		shift 2
	done
	[ -n "$variant" ] || usage_error "--variant is required"
	is_source_variant "$variant" ||
		usage_error "bad variant '$variant' (one of: $SOURCE_VARIANTS)"
	if [ -n "$ksrc" ]; then
		[ -z "$src$dist$kver$source" ] ||
			usage_error "--ksrc is a tree of your own:" \
				"not with --src, --dist, --kver or --source"
		p=$(ksrc_problem "$ksrc")
		[ -z "$p" ] || usage_error "--ksrc $ksrc: $p"
		source=$ksrc
	fi
	need_cmd make gcc patch git rsync cmp sha256sum flock depmod readelf

	# fetch-source.sh checks --src, --dist and --kver; the series is the tree's.
	[ -n "$source" ] ||
		source=$("$TOOLS/kernel/fetch-source.sh" ${dist:+--dist "$dist"} \
			${src:+--series "$src"} ${kver:+--kver "$kver"} | tail -n 1)
	if [ ! -f "$source/Makefile" ] || [ ! -f "$source/kernel/async.c" ]; then
		die "$source is not an unpacked kernel source tree"
	fi
	source=$(cd "$source" && pwd)
	series=$(makefile_version "$source" 2)
	[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || die "no VERSION.PATCHLEVEL in $source/Makefile"
	[ -z "$src" ] || [ "$src" = "$series" ] ||
		die "$source is linux $series, not the --src $src asked for"
	if [ -n "$ksrc" ]; then
		identity=$(ksrc_identity "$source")
		log "$source: $identity"
		kver=$(makefile_version "$source" 3)-ksrc
		source_line="ksrc $identity"
	elif [ -z "$kver" ] && [[ $source == */source/*/linux-source-* ]]; then
		# fetch-source.sh's: $CACHE/source/<debversion>/linux-source-*.
		kver=${source%/linux-source-*}
		kver=${kver##*/}
	elif [ -z "$kver" ]; then
		kver=$(makefile_version "$source" 3)-local
	fi
	[ -n "$ksrc" ] || source_line="$kver $(sha256sum <"$source/Makefile" | cut -d' ' -f1)"
	check_debversion "$kver"

	if [ "$variant" != vanilla ]; then
		for p in "$TOOLS/kernel/patches/$variant/$series"/*.patch; do
			[ -f "$p" ] && patches+=("$p")
		done
		[ "${#patches[@]}" -gt 0 ] ||
			die "no patches in tools/kernel/patches/$variant/$series for the $variant" \
				"variant of linux $series (the series there:" \
				"$(cd "$TOOLS/kernel/patches/$variant" && echo */ | tr -d /))"
	fi
	patches+=(${extra[@]+"${extra[@]}"})
	stamp=$(entry_stamp "$variant" "$source_line" "$CONFIG" "$FRAGMENT" \
		${patches[@]+"${patches[@]}"})
	key=$(printf '%s\n' "$stamp" | sha256sum | cut -c1-12)

	cache=$(cache_dir)
	entry=$cache/build/$kver-$variant-$key
	tree=$cache/build/tree/$kver
	[ -z "$ksrc" ] || tree=$cache/build/tree/ksrc-$(printf '%s\n' "$identity" |
		sha256sum | cut -c1-12)
	# One builder per tree: its variants share its src/ and obj/.
	entry_lock "$tree"
	if entry_valid "$entry" "$stamp"; then
		log "using cached $entry"
		printf '%s\n' "$entry"
		exit 0
	fi
	entry_remove "$entry"

	[ -d "$tree/src" ] || new_tree "$source" "$tree"
	patch_tree "$tree" "$source" "$kver" ${patches[@]+"${patches[@]}"}
	mkdir -p "$tree/obj"
	: >"$tree/make.log"
	configure "$tree" "$stamp"
	export KBUILD_BUILD_USER=module_async KBUILD_BUILD_HOST=build-kernel
	# uname -v "#1 <debversion> <variant> <key>" (Debian's; elsewhere the
	# source's date): a rebuild without changes does not relink.
	export KBUILD_BUILD_VERSION=1 KBUILD_BUILD_VERSION_TIMESTAMP="$kver $variant $key"
	KBUILD_BUILD_TIMESTAMP=$(date -u -R -d "@$(stat -c %Y "$source/Makefile")")
	export KBUILD_BUILD_TIMESTAMP
	compile "$tree" "$cache" "$series"
	make_entry "$tree" "$entry" "$stamp"
	printf '%s\n' "$entry"
}

main "$@"
