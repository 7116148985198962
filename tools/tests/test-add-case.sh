#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-add-case.sh - a case added in three files, and everything else
# following from them.
#
# On a copy of the tree (the files git knows, as they are now), adds
# request_module_from_async_brd the way README.md's "Adding a case" says: a
# row in module_async.c's case table, a row in tools/expected/verdicts
# (bfq's verdicts: brd is a modular block driver, requested the same way)
# and brd's symbol in config.  Then checks that the change touched those
# three files only, and that the runner lists the case and the module, the
# expected table has the case, the driver's tests accept the runner, and
# the initramfs for Debian's stock kernel packs brd.ko.
# Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly NEW=request_module_from_async_brd

usage()
{
	echo "Usage: $PROG [--help]"
	echo "Adds $NEW on a copy of the tree and checks what follows."
}
case ${1:-} in
'') ;;
-h|--help) usage; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
mkdir -p "$tree"
(cd "$TOP" && git ls-files -z | cpio -pdm0 --quiet "$tree")
git -C "$tree" init -q
git -C "$tree" add -A
git -C "$tree" -c user.name=t -c user.email=t@t commit -qm base

# ---- the three edits ----------------------------------------------------

# module_async.c: a row after bfq's, of the same shape.
awk -v new="$NEW" '
	{ print }
	/MODULES\("bfq"\) },$/ && !done {
		print "\t{ \"" new "\", UNSAFE_IF_ALWAYS_SYNC,"
		print "\t  case_request_module_from_async,"
		print "\t  MODULES(\"ma_request\"), MODULES(\"brd\") },"
		done = 1
	}' "$tree/module_async.c" >"$tmp/c" && mv "$tmp/c" "$tree/module_async.c"
# tools/expected/verdicts: bfq's row under the new name.
awk -v new="$NEW" '
	{ print }
	$1 == "request_module_from_async_bfq" { $1 = new; print }' \
	"$tree/tools/expected/verdicts" >"$tmp/v" && mv "$tmp/v" "$tree/tools/expected/verdicts"
printf '%s\n' "# The RAM disk driver $NEW requests." "CONFIG_BLK_DEV_RAM=m" >>"$tree/config"

# ---- what follows ---------------------------------------------------------

changed=$(git -C "$tree" diff --name-only | sort | tr '\n' ' ')
if [ "$changed" = "config module_async.c tools/expected/verdicts " ]; then
	pass "the new case is three files: $changed"
else
	fail "the new case changed: $changed"
fi

if make -s -C "$tree" OUTPUT="$tree/build" all >"$tmp/build.log" 2>&1; then
	pass "the runner builds with the new row"
else
	fail "the runner does not build with the new row: $(tail -n 3 "$tmp/build.log")"
fi
runner=$tree/build/module_async
if "$runner" --list 2>/dev/null | awk '{ print $1 }' |
   grep -A1 -x request_module_from_async_bfq | grep -qx "$NEW"; then
	pass "--list has $NEW after request_module_from_async_bfq"
else
	fail "--list lacks $NEW after request_module_from_async_bfq"
fi
if "$runner" --list-modules 2>/dev/null | grep -qx brd; then
	pass "--list-modules names brd"
else
	fail "--list-modules does not name brd"
fi
if "$tree/tools/expected/expected.sh" column stock | grep -qx "$NEW skip"; then
	pass "the expected table's stock column has $NEW"
else
	fail "the expected table's stock column lacks $NEW"
fi
if "$tree/tools/tests/test-driver.sh" "$runner" >"$tmp/driver.log" 2>&1; then
	pass "the driver's tests accept the new runner (cases, table, settings' bound)"
else
	fail "the driver's tests: $(grep '^FAIL' "$tmp/driver.log" | tr '\n' ' ')"
fi

# The initramfs for the stock kernel, as vm.sh makes it, holds brd.ko.
entry=$("$TOOLS/kernel/fetch-kernel.sh" 2>/dev/null | tail -n 1)
stage=$tmp/stage
mkdir -p "$stage/modules"
cp "$tree/module_async.sh" "$runner" "$tree/config" "$tree/settings" "$stage/"
if make -s -C "$tree/modules" KDIR="$entry/kdir" >"$tmp/modules.log" 2>&1 &&
   cp "$tree"/modules/*.ko "$stage/modules/" &&
   "$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$stage" \
	--out "$tmp/initrd.gz" >"$tmp/initrd.log" 2>&1 &&
   gzip -dc "$tmp/initrd.gz" | cpio -it --quiet 2>/dev/null >"$tmp/initrd.list" &&
   grep -q '/brd\.ko$' "$tmp/initrd.list"; then
	pass "the stock kernel's initramfs packs brd.ko"
else
	fail "no brd.ko in the stock kernel's initramfs"
	tail -n 5 "$tmp/modules.log" "$tmp/initrd.log" 2>/dev/null | sed 's/^/    /'
fi
checks_summary
