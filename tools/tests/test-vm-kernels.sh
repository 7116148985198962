#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-vm-kernels.sh - the ways `make vm` is told which kernel to boot.
#
#   - PATCH= alone: vanilla plus the patch, built and booted (the patch
#     prints a line at boot, which the console must show), the vanilla
#     kernel's verdicts;
#   - KERNEL=FILE KDIR=<Debian's headers>: the stock kernel as a user's
#     own, its modules taken from beside the headers, the stock verdicts;
#   - refusals before anything is fetched or built (exit 2): a patch on the
#     stock binary, headers with no module tree beside them, MODDIR= that is
#     no module tree.
# Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	echo "Usage: $PROG [--help]"
	echo "Boots the suite by make vm with PATCH=, KERNEL=FILE KDIR= and MODDIR=."
}
case ${1:-} in
'') ;;
-h|--help) usage; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

out=$TOP/build/check/vm-kernels
rm -rf "$out"
mkdir -p "$out"

# refused WHAT STATUS-LOG ARGS...: make vm ARGS exits 2 at once, naming why.
refused()
{
	local what=$1 rc=0

	shift
	make -s -C "$TOP" vm "$@" >"$out/refused.out" 2>"$out/refused.log" || rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'Error 2' "$out/refused.log" &&
	   ! grep -q 'downloading\|booting\|building' "$out/refused.log"; then
		pass "refused at once: $what ($(grep -m1 'vm.sh:' "$out/refused.log"))"
	else
		fail "not refused at once: $what (exit $rc, log $out/refused.log)"
	fi
}

# verdicts_of KTAP KERNEL WHAT RC: the document holds the verdicts expected
# of KERNEL and the run exited as expected (make's 0 is the script's 0).
verdicts_of()
{
	"$TOOLS/expected/expected.sh" column "$2" >"$out/expected.$2"
	if "$TOOLS/ktap/compare-verdicts.sh" --status "$4" "$1" "$out/expected.$2" \
			>"$out/compare.log" 2>&1; then
		pass "$3: the verdicts expected of $2"
	else
		fail "$3: not the verdicts expected of $2: $(grep -m3 '^FAIL' "$out/compare.log" |
			tr '\n' ' ')"
	fi
}

# ---- refusals ---------------------------------------------------------------

stock=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1)
krel=$(cat "$stock/krel")
headers=$stock/usr/src/linux-headers-$krel
[ -f "$headers/Makefile" ] || die "no headers at $headers"

cat >"$out/marker.patch" <<'EOF'
--- a/kernel/async.c
+++ b/kernel/async.c
@@ -345,2 +345,9 @@ bool current_is_async(void)
 }
 EXPORT_SYMBOL_GPL(current_is_async);
+
+static int __init async_candidate_marker(void)
+{
+	pr_info("module_async: candidate patch applied\n");
+	return 0;
+}
+core_initcall(async_candidate_marker);
EOF

refused "PATCH= on the stock kernel" KERNEL=stock PATCH="$out/marker.patch"
# Headers whose root has no lib/modules/<release>/.
mkdir -p "$out/bare/usr/src"
ln -s "$headers" "$out/bare/usr/src/linux-headers-$krel"
refused "headers without a module tree" KERNEL="$stock/vmlinuz" \
	KDIR="$out/bare/usr/src/linux-headers-$krel"
refused "MODDIR= that is no module tree" KERNEL="$stock/vmlinuz" KDIR="$headers" \
	MODDIR="$out"

# ---- boots ------------------------------------------------------------------

rc=0
make -s -C "$TOP" vm PATCH="$out/marker.patch" >"$out/patch.out" 2>"$out/patch.log" || rc=$?
console=$TOP/build/vm/vanilla+patches/console.log
if grep -q 'module_async: candidate patch applied' "$console" 2>/dev/null; then
	pass "PATCH= alone boots vanilla with the patch (exit $rc)"
else
	fail "PATCH= alone: no sign of the patch in $console (exit $rc, log $out/patch.log)"
fi
verdicts_of "$TOP/build/vm/vanilla+patches/results.ktap" vanilla "PATCH=" "$rc"

rc=0
make -s -C "$TOP" vm KERNEL="$stock/vmlinuz" KDIR="$headers" \
	>"$out/headers.out" 2>"$out/headers.log" || rc=$?
beside="modules of $krel from $stock/lib/modules/$krel"
if [ "$rc" -eq 0 ] && grep -qF "$beside" "$out/headers.log"; then
	pass "KERNEL=FILE KDIR=<headers>: modules from beside the headers, exit 0"
else
	fail "KERNEL=FILE KDIR=<headers>: exit $rc (log $out/headers.log)"
fi
verdicts_of "$TOP/build/vm/custom/results.ktap" stock \
	"KERNEL=FILE KDIR=<headers>" "$rc"

checks_summary
