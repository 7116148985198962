#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksft-install.sh - the suite in a copy of a kernel source tree (hard links,
# an entry of the cache's kind: the source is never written), `make series`
# applied afresh each run.  Prints the tree (or the install) as its last line.
#
# usage: ksft-install.sh --source DIR --tree DIR [--install DIR --kdir KDIR]
#   --source DIR   unpacked kernel source (tools/kernel/fetch-source.sh)
#   --tree DIR     where the copy goes
#   --install DIR  its kselftest install (make -C tools/testing/selftests
#                  TARGETS=module_async install) to DIR, emptied first
#   --kdir KDIR    kernel build tree for the test modules (with --install)

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0"
}

source='' tree='' install='' kdir=''
while [ $# -gt 0 ]; do
	case $1 in
	--source | --tree | --install | --kdir)
		need_arg "$1" $#; printf -v "${1#--}" %s "$2"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -n "$source" ] || usage_error "--source is required"
[ -n "$tree" ] || usage_error "--tree is required"
[ -z "$install" ] || [ -n "$kdir" ] || usage_error "--install needs --kdir"
need_cmd cp rsync git make

[ -f "$source/tools/testing/selftests/lib.mk" ] || die "$source is not a kernel source tree"
src=$(cd "$source" && pwd)
mkdir -p "$(dirname "$tree")"
tree=$(cd "$(dirname "$tree")" && pwd)/${tree##*/}

stamp="hard links of $src ($(cat "$src/../.complete" 2>/dev/null || stat -c %i "$src"))"
entry_lock "$tree"
if ! entry_valid "$tree" "$stamp"; then
	entry_remove "$tree"
	entry_tmp "$tree"
	log "copying $src (hard links)"
	cp -al "$src/." "$ENTRY_TMP/" || die "cannot copy $src"
	entry_commit "$tree" "$stamp"
fi

# The series by git apply, which writes a file anew (never through a hard
# link), outside any repository above; what it changes outside the suite
# restored first.
series=$(mktemp -d "${TMPDIR:-/tmp}/ksft-series.XXXXXX")
trap 'rm -rf "$series"' EXIT
git -C "$TOP" config user.name >/dev/null ||
	export GIT_AUTHOR_NAME=ksft-install GIT_AUTHOR_EMAIL=ksft-install@localhost
"$TOOLS/kernel/series.sh" --source "$src" --out "$series" >/dev/null ||
	die "could not make the series against $src"
selftests=$tree/tools/testing/selftests
rm -rf "$selftests/module_async"
for f in MAINTAINERS tools/testing/selftests/Makefile; do
	ln -f "$src/$f" "$tree/$f" || die "cannot restore $tree/$f"
done
(cd "$tree" && GIT_CEILING_DIRECTORIES=$(dirname "$tree") \
	git apply --whitespace=error "$series"/000[1-9]-*.patch) ||
	die "the series does not apply to $tree"
# A lib.mk older than TEST_GEN_MODS_DIR (6.1's) gets tools/kernel/lib.mk-mods,
# in a new file (the tree's lib.mk is a hard link to the cache's).
libmk=$src/tools/testing/selftests/lib.mk
if ! grep -q '^gen_mods_dir:' "$libmk"; then
	rm "$selftests/lib.mk"
	cat "$libmk" "$TOOLS/kernel/lib.mk-mods" >"$selftests/lib.mk" ||
		die "cannot extend $selftests/lib.mk"
fi

if [ -z "$install" ]; then
	printf '%s\n' "$tree"
	exit 0
fi
rm -rf "$install"
mkdir -p "$install"
install=$(cd "$install" && pwd)
mapfile -t compat < <(compat_make_args "$tree/tools/testing/selftests")
make -j"$(nproc)" -C "$tree/tools/testing/selftests" TARGETS=module_async KDIR="$kdir" \
	${compat[@]+"${compat[@]}"} install INSTALL_PATH="$install" >&2 ||
	die "make install failed"
printf '%s\n' "$install"
