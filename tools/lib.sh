# SPDX-License-Identifier: GPL-2.0
#
# The preamble every script of tools/ sources; sets PROG (its name, for
# messages), TOOLS (this directory) and TOP.  A script defines usage().
#
# Exit statuses, the same in every script:
#	0, 1, 4  the outcome: nothing failed, a check or a case failed, all
#		 skipped (the suite's own statuses, and checks_summary's 0/1)
#	2        bad usage (usage_error)
#	3        the job could not be done: a missing tool, a download, a
#		 build or a VM that failed (die)

# shellcheck shell=bash

set -euo pipefail
shopt -s inherit_errexit
PROG=${0##*/}
TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$TOOLS/.." && pwd)
readonly TOOLS TOP
# Debian's PATH for users lacks the sbin directories, where kmod's depmod is.
[[ :$PATH: == *:/usr/sbin:* ]] || PATH=$PATH:/usr/sbin
[[ :$PATH: == *:/sbin:* ]] || PATH=$PATH:/sbin
# A relative cache is the directory's where the first script began, handed on
# absolute: make -C and Kbuild read paths from directories of their own.
for _var in MODULE_ASYNC_CACHE XDG_CACHE_HOME; do
	[[ -z ${!_var:-} || ${!_var} == /* ]] || export "$_var=$PWD/${!_var}"
done
unset _var
readonly EXIT_USAGE=2 EXIT_INFRA=3
# The test modules' KCFLAGS out of a tree: what older kernels lack.
readonly COMPAT_KCFLAGS="-include $TOOLS/compat/modules.h"

# compat_make_args SELFTESTS: make variables (a line each) for a kselftest
# build whose kselftest.h lacks ksft_test_result_code() (5.10, 6.1);
# -iquote, as lib.mk puts USERCFLAGS after the suite's -I.
compat_make_args()
{
	grep -q ksft_test_result_code "$1/kselftest.h" && return 0
	printf '%s\n' "USERCFLAGS=-iquote $TOOLS/compat/ksft" "KCFLAGS=$COMPAT_KCFLAGS"
}

# What make (in a target or a recipe's shell) or Kbuild cannot take in a path.
readonly PATH_UNSAFE=$' \t\n:,%$#\\\'"`;&|<>()*?[]{}!'

# path_problem PATH: why make or Kbuild cannot take PATH; nothing if they can.
path_problem()
{
	local -A names=([' ']="a space" [$'\t']="a tab" [$'\n']="a newline")
	local c=${1//[^"$PATH_UNSAFE"]/}

	c=${c:0:1}
	[ -z "$c" ] ||
		echo "it holds ${names[$c]:-"'$c'"}, which make and Kbuild cannot take in a path"
}

top_problem=$(path_problem "$TOP")
if [ -n "$top_problem" ]; then
	printf '%s: the checkout %s: %s; move or clone it to a path without one\n' \
		"$PROG" "$TOP" "$top_problem" >&2
	exit "$EXIT_USAGE"
fi

# build-kernel.sh's variants of linux-source: vanilla, and those of
# tools/kernel/patches/<variant>/ (tools/expected/verdicts says what each is).
readonly SOURCE_VARIANTS="vanilla patched fixed window"

is_source_variant()
{
	[[ " $SOURCE_VARIANTS " == *" $1 "* ]]
}

# The payload, listed here only: what goes into a kernel tree as
# tools/testing/selftests/module_async/ (git pathspecs relative to $TOP).
readonly PAYLOAD=(Makefile README config settings module_async.sh module_async.c
	':(glob)runner/*.[ch]' ':(glob)lib/*.[ch]' ':(exclude,glob)lib/test_*'
	modules/Makefile ':(glob)modules/*.[ch]')

# clone_files [PATHSPEC...]: what a clone holds of PATHSPECs, NUL-terminated.
clone_files()
{
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard -- "${@:-.}")
}

# payload_copy DIR: the payload into DIR (made).
payload_copy()
{
	mkdir -p "$1" && clone_files "${PAYLOAD[@]}" | rsync -a --from0 --files-from=- "$TOP/" "$1/"
}

log()
{
	printf '%s: %s\n' "$PROG" "$*" >&2
}

die()
{
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit "$EXIT_INFRA"
}

usage_error()
{
	printf '%s: %s\n' "$PROG" "$*" >&2
	usage >&2
	exit "$EXIT_USAGE"
}

# need_arg OPTION $#: an option that takes a value has one.
need_arg()
{
	[ "$2" -ge 2 ] || usage_error "option $1 needs a value"
}

# The test reporter, KTAP: a result a check, a failure's details in "# "
# lines after it.  checks_summary prints the plan and "N passed, N failed,
# N skipped", and fails when a check did.
passed=0 failed=0 skipped=0
result()
{
	local n=$((passed + failed + skipped + 1))

	[ "$n" -gt 1 ] || echo "KTAP version 1"
	echo "$1 $n $2"
}

pass()
{
	result ok "$*"
	passed=$((passed + 1))
}

fail()
{
	result "not ok" "$*"
	failed=$((failed + 1))
}

# skip WHAT: WHY
skip()
{
	local what=$* why=

	[[ $what != *": "* ]] || why=${what#*: } what=${what%%: *}
	result ok "$what # SKIP${why:+ $why}"
	skipped=$((skipped + 1))
}

# verify WHAT CMD...: pass WHAT if CMD succeeds, else fail WHAT.
verify()
{
	local what=$1

	shift
	if "$@"; then
		pass "$what"
	else
		fail "$what"
	fi
}

checks_summary()
{
	local n=$((passed + failed + skipped))

	[ "$n" -gt 0 ] || echo "KTAP version 1"
	echo "1..$n"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

need_cmd()
{
	local cmd

	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 ||
			die "'$cmd' is not installed (needed by $PROG)"
	done
}

# cache_dir: the cache's path; status 2, saying why, where there is none.
cache_dir()
{
	if [ -n "${MODULE_ASYNC_CACHE:-}" ]; then
		printf '%s\n' "$MODULE_ASYNC_CACHE"
	elif [ -n "${XDG_CACHE_HOME:-}${HOME:-}" ]; then
		printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/module_async"
	else
		log "no cache: HOME, XDG_CACHE_HOME and MODULE_ASYNC_CACHE are all unset (set one)"
		return "$EXIT_USAGE"
	fi
}

# cache_ready: the cache can be written (an apt answer not kept would read
# as an empty one): none or a path make cannot take, exit 2; else exit 3.
cache_ready()
{
	local dir why err

	dir=$(cache_dir) || { usage >&2; exit "$EXIT_USAGE"; }
	why=$(path_problem "$dir")
	[ -z "$why" ] || usage_error "the cache $dir: $why (set MODULE_ASYNC_CACHE)"
	err=$(mkdir -p -- "$dir" 2>&1) || die "cannot make the cache $dir: ${err##*: }"
	[ -w "$dir" ] || die "cannot write to the cache $dir (read-only?)"
}

# check_debversion VERSION: a Debian version as it may appear in a file name.
check_debversion()
{
	[[ $1 =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] ||
		usage_error "bad Debian version '$1'"
}

# The known Debian releases and their kernel's series (a series' source
# from the first); any other is refused before apt is asked.
readonly DEB_RELEASES="bullseye:5.10 bookworm:6.1 trixie:6.12 sid:7.2 bookworm-backports:6.12"

deb_releases()
{
	tr ' ' '\n' <<<"$DEB_RELEASES" | cut -d: -f1
}

deb_series()
{
	tr ' ' '\n' <<<"$DEB_RELEASES" | cut -d: -f2 | awk '!seen[$0]++'
}

# series_release X.Y: the first known release of series X.Y, if any.
series_release()
{
	tr ' ' '\n' <<<"$DEB_RELEASES" | awk -F: -v s="$1" '$2 == s && !n++ { print $1 }'
}

check_release()
{
	[[ $1 =~ ^[a-z]+(-[a-z]+)?$ && " $DEB_RELEASES " == *" $1:"* ]] && return 0
	usage_error "bad Debian release '$1' (known: $(deb_releases | paste -sd' '))"
}

check_series()
{
	[[ $1 =~ ^[0-9]+\.[0-9]+$ ]] && [ -n "$(series_release "$1")" ] && return 0
	usage_error "bad series '$1': no known Debian release carries" \
		"linux-source-$1 (known: $(deb_series | paste -sd' '))"
}

# ksrc_problem DIR: why DIR is no kernel tree build-kernel.sh --ksrc can
# build out of tree (Kbuild's O= wants one never configured in place).
ksrc_problem()
{
	[ -d "$1" ] || { echo "no such directory"; return; }
	path_problem "$(cd "$1" && pwd -P)" | grep . && return
	if ! grep -qE '^VERSION = [0-9]+$' "$1/Makefile" 2>/dev/null ||
	   ! grep -qE '^PATCHLEVEL = [0-9]+$' "$1/Makefile" ||
	   [ ! -f "$1/kernel/async.c" ] || [ ! -f "$1/scripts/kconfig/merge_config.sh" ]; then
		echo "not a kernel source tree (no Makefile with VERSION and PATCHLEVEL," \
			"kernel/async.c, scripts/kconfig/merge_config.sh)"
	elif [ -e "$1/.config" ] || [ -e "$1/include/config" ]; then
		echo "configured in place (.config): kbuild builds out of tree only from" \
			"a clean tree (make mrproper there)"
	fi
}

# An entry is made beside its place (entry_tmp), then renamed in
# (entry_commit); its .complete stamp, written last, says from what.

# entry_manifest DIR: "SIZE PATH" for each file of DIR, sorted.
entry_manifest()
{
	(cd "$1" && find . -type f ! -name .complete ! -name .manifest -printf '%s %P\n') |
		LC_ALL=C sort
}

# entry_valid DIR STAMP: DIR is a complete entry made from STAMP, its
# .manifest files there with their sizes (hashing 20000 module files would
# take ten seconds); says which is not.
entry_valid()
{
	local bad

	[ -f "$1/.complete" ] && [ "$(cat "$1/.complete")" = "$2" ] || return 1
	if [ ! -f "$1/.manifest" ]; then
		log "${1##*/}: no manifest to check it by"
		return 1
	fi
	bad=$(entry_manifest "$1" | LC_ALL=C comm -23 "$1/.manifest" - | sed -n 1p)
	[ -z "$bad" ] && return 0
	log "${1##*/}: ${bad#* } is missing or not its size (${bad%% *} bytes)"
	return 1
}

# The checksums of what a run loads (10 MB of 400): a fetched kernel's from
# its packages (DEBIAN/md5sums), a built one's from entry_sum.
readonly ENTRY_SUMS=.md5sums

# entry_sum PATH...: record the checksums of files of the entry being made.
entry_sum()
{
	(cd "$ENTRY_TMP" && md5sum -- "$@") >>"$ENTRY_TMP/$ENTRY_SUMS"
}

# entry_verify DIR PATH...: each PATH of DIR (a link followed, within DIR)
# matches DIR's checksums; says which does not.
entry_verify()
{
	local root f real paths=() sums bad

	root=$(cd "$1" && pwd -P)
	shift
	if [ ! -f "$root/$ENTRY_SUMS" ]; then
		log "${root##*/}: no checksums to check it by"
		return 1
	fi
	for f in "$@"; do
		real=$(readlink -f "$root/$f") || real=
		if [[ $real != "$root"/* ]] || [ ! -f "$real" ]; then
			log "${root##*/}: $f is missing or leads out of the entry"
			return 1
		fi
		paths+=("${real#"$root"/}")
	done
	# Their lines of the checksums; the first that has none last, failing.
	if ! sums=$(printf '%s\n' "${paths[@]}" |
		awk 'NR == FNR { want[$0] = 1; next }
		     { p = substr($0, 35) }
		     p in want && !(p in seen) { seen[p] = 1; print }
		     END { for (p in want) if (!(p in seen)) { print p; exit 1 } }' \
		- "$root/$ENTRY_SUMS"); then
		log "${root##*/}: ${sums##*$'\n'} has no checksum"
		return 1
	fi
	bad=$(cd "$root" && LC_ALL=C md5sum -c --quiet <<<"$sums" 2>/dev/null |
		sed -n '1s/: FAILED.*$//p') || true
	[ -n "$bad" ] || return 0
	log "${root##*/}: $bad does not match its checksum"
	return 1
}

# entry_lock DIR: serialise DIR's builders (fd 9, open until the caller exits).
entry_lock()
{
	mkdir -p "$(dirname "$1")"
	exec 9>"$1.lock"
	flock 9
}

# may_own PID FILE: PID runs and began (starttime, field 22) before FILE
# was born (else its ctime; mkinitramfs.sh dates its mtime 1970).
may_own()
{
	local stat fields btime made

	kill -0 "$1" 2>/dev/null || return 1
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
	read -ra fields <<<"${stat##*) }"
	[ "${fields[0]:-}" != Z ] || return 1
	btime=$(awk '$1 == "btime" { print $2 }' /proc/stat) || return 0
	[ -n "$btime" ] && [ -n "${fields[19]:-}" ] || return 0
	made=$(stat -c %W "$2") || return 0
	[ "$made" != 0 ] || made=$(stat -c %Z "$2") || return 0
	[ $((btime + fields[19] / $(getconf CLK_TCK))) -le $((made + 1)) ]
}

# stale_remove PREFIX: remove the PREFIX<pid>.* of processes gone.
stale_remove()
{
	local f pid

	for f in "$1"*; do
		[[ ${f#"$1"} =~ ^([0-9]+)(\.|$) ]] || continue
		pid=${BASH_REMATCH[1]}
		may_own "$pid" "$f" && continue
		log "removing ${f##*/}, left behind by process $pid"
		rm -rf "$f"
	done
}

# entry_tmp DIR: ENTRY_TMP, a fresh directory beside DIR, gone at exit.
ENTRY_TMP=
entry_tmp()
{
	stale_remove "$1.tmp."
	ENTRY_TMP=$(mktemp -d "$1.tmp.$$.XXXXXX")
	trap 'entry_tmp_cleanup' EXIT
}

entry_tmp_cleanup()
{
	[ -z "$ENTRY_TMP" ] || entry_remove "$ENTRY_TMP"
}

# entry_remove DIR: delete an entry and any leftovers of earlier builders.
entry_remove()
{
	local d

	for d in "$1" "$1".tmp.*; do
		[ -e "$d" ] || continue
		chmod -R u+w "$d" 2>/dev/null || true
		rm -rf "$d"
	done
}

# entry_commit DIR STAMP: the manifest, the stamp last, then into place.
# Each step checked: a caller's errexit may be off (a function in a || list).
entry_commit()
{
	{ entry_manifest "$ENTRY_TMP" >"$ENTRY_TMP/.manifest" &&
	  printf '%s\n' "$2" >"$ENTRY_TMP/.complete.new"; } ||
		die "cannot write the cache entry ${1##*/} (a full disk?)"
	sync -f "$ENTRY_TMP/.complete.new" 2>/dev/null || true
	{ mv "$ENTRY_TMP/.complete.new" "$ENTRY_TMP/.complete" && mv -T "$ENTRY_TMP" "$1"; } ||
		die "cannot move the cache entry ${1##*/} into place"
	ENTRY_TMP=
}

# elf_build_id FILE: ELF FILE's build ID in hex; fails silently without one.
elf_build_id()
{
	local id

	id=$(LC_ALL=C readelf -n "$1" 2>/dev/null |
		awk '$1 == "Build" && $2 == "ID:" && !n++ { print $3 }') || true
	[[ $id =~ ^[0-9a-f]+$ ]] || return 1
	printf '%s\n' "$id"
}

# kernel_image_check IMAGE VMLINUX SCRIPT: prints the build ID IMAGE's
# kernel (unpacked by SCRIPT, a tree's scripts/extract-vmlinux) shares with
# VMLINUX; else fails, saying why.
kernel_image_check()
{
	local want got="" tmp

	if ! want=$(elf_build_id "$2"); then
		log "$2 has no build ID to check $1 by"
		return 1
	fi
	stale_remove "${TMPDIR:-/tmp}/module_async.vmlinux."
	tmp=$(mktemp "${TMPDIR:-/tmp}/module_async.vmlinux.$$.XXXXXX")
	if "$3" "$1" >"$tmp" 2>/dev/null; then
		got=$(elf_build_id "$tmp") || got=
	fi
	rm -f "$tmp"
	if [ -z "$got" ]; then
		log "$1: $3 finds no kernel with a build ID in it"
		return 1
	elif [ "$got" != "$want" ]; then
		log "$1 holds the kernel of build ID $got, not $2 ($want)"
		return 1
	fi
	printf '%s\n' "$want"
}

# A step's outputs are kept while its stamp has its KEY and their stat.
step_text()
{
	printf '%s\n' "$1"
	shift
	[ $# -eq 0 ] || stat -c '%s %y %n' -- "$@" 2>/dev/null
}

# step_current STAMP KEY FILE...: STAMP says FILEs were made from KEY.
step_current()
{
	local text

	[ -f "$1" ] && text=$(step_text "${@:2}") && [ "$text" = "$(cat "$1")" ]
}

# step_done STAMP KEY FILE...: FILEs were made from KEY (written last).
step_done()
{
	step_text "${@:2}" >"$1.tmp.$$" && mv "$1.tmp.$$" "$1"
}

# files_key PATH...: a checksum line for each file under PATHs, in order.
files_key()
{
	find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
}

# tools_key CMD...: each command's path (hash: no fork), size and time,
# and dpkg's status's (an upgraded library changes it).
tools_key()
{
	local c paths=()

	for c in "$@"; do
		hash "$c" 2>/dev/null || true
		paths+=("${BASH_CMDS[$c]:-$c}")
	done
	stat -L -c '%s %y %n' -- "${paths[@]}"
	stat -c '%s %y %n' /var/lib/dpkg/status 2>/dev/null || true
}

# module_files MODDIR NAME: module NAME's and its dependencies' files.
module_files()
{
	awk -v want="${2//-/_}" '{ sub(/:/, ""); n = $1; sub(/.*\//, "", n)
		sub(/\.ko(\.[a-z]+)?$/, "", n); gsub(/-/, "_", n)
		if (n == want) { for (i = 1; i <= NF; i++) print $i; exit } }' \
		"$1/modules.dep" 2>/dev/null
}
