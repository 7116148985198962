#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-add-case.sh - cases added as README.md's "Adding a case" says, and
# everything else following from them.
#
# On a copy of the tree (the files git knows, as they are now), adds first
# a case with new behaviour, added_jobs_done_on_return, in four files: its
# row and its function's declaration in module_async.c, its function in a
# new runner/cases_added.c, its module in a new modules/ma_added.c (an
# init that queues jobs held on nothing) and its row in
# tools/expected/verdicts; then a row reusing a function,
# request_module_from_async_brd, in three: its row, bfq's expected row
# under its name (brd is a modular block driver, requested the same way)
# and brd's symbol in config.  Checks that each touched those files only;
# that the runner lists the cases and the modules, the expected table has
# the cases, the driver's tests accept the runner, the initramfs for
# Debian's stock kernel packs ma_added.ko and brd.ko, the new case runs on
# that kernel in a VM (tools/vm/vm.sh) as the table has it; and that a
# table naming more test modules than the runner has room for stops it,
# saying so.  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

readonly NEW=added_jobs_done_on_return
readonly BRD=request_module_from_async_brd

usage()
{
	echo "Usage: $PROG [--help]"
	echo "Adds $NEW and $BRD on a copy of the tree and checks what follows."
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

# changed_only FILE...: the copy's change since its last commit is FILE...,
# and is committed.
changed_only()
{
	local changed want

	git -C "$tree" add -A
	changed=$(git -C "$tree" diff --cached --name-only | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	git -C "$tree" -c user.name=t -c user.email=t@t commit -qm "$*"
	if [ "$changed" = "$want" ]; then
		pass "the case is $# files: $changed"
	else
		fail "the case changed $changed, not $want"
	fi
}

# ---- a case with new behaviour: four files ---------------------------------

# module_async.c: its function's declaration and its row, after
# chained_async_init_completes's.
awk -v new="$NEW" '
	/^case_fn case_chained_async_init_completes;$/ {
		print "case_fn case_" new ";"
	}
	{ print }
	/MODULES\("ma_chained"\), NULL },$/ {
		print "\t{ \"" new "\", SAFE, case_" new ","
		print "\t  MODULES(\"ma_added\"), NULL },"
	}' "$tree/module_async.c" >"$tmp/c" && mv "$tmp/c" "$tree/module_async.c"
# runner/cases_added.c: load ma_added, its jobs must be done at its return.
# Each new file begins with the tree's SPDX line.
{ head -n 1 "$tree/modules/ma_plain.c" && cat <<EOF; } >"$tree/runner/cases_added.c"
/*
 * cases_added.c - $NEW: ma_added's init queues four jobs held on nothing;
 * where a load waits for its init's own async work they are done when it
 * returns.
 */
#include <errno.h>
#include <string.h>

#include "runner.h"

void case_$NEW(struct case_ctx *ctx)
{
	struct module_load load = { .params = "jobs=4", .knob_after = "done" };
	char path[PATH_MAX];
	int ret;

	ret = module_path(ctx->suite, "ma_added", path, sizeof(path));
	load.path = path;
	if (!ret)
		ret = module_load_start(&load);
	if (!ret &&
	    module_load_wait(&load, ctx->suite->timeout_ms) == CHILD_RUNNING) {
		verdict(ctx, KTAP_WEDGED, "the load of ma_added did not return");
		return;
	}
	if (!ret)
		ret = module_load_result(&load);
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_added: %s", strerror(-ret));
	else if (!load.child.report.has_value || load.child.report.value != 1)
		verdict(ctx, KTAP_FAIL, "the load returned, its jobs undone");
}
EOF
# modules/ma_added.c: an init queueing "jobs" jobs that hold on nothing.
{ head -n 1 "$tree/modules/ma_plain.c" && cat <<'EOF'; } >"$tree/modules/ma_added.c"
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_JOBS();
MA_KNOB_DONE();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_end(0);
}

static int __init ma_added_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_added_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues jobs held on nothing");
MODULE_LICENSE("GPL");
EOF
# tools/expected/verdicts: its row, in the table's order, a cell a policy:
# async_init_completes's, as every policy but never-sync waits for the work
# an init queues itself.
awk -v new="$NEW" '
	{ print }
	$1 == "async_init_completes" { $1 = new; row = $0 }
	$1 == "chained_async_init_completes" { print row }' \
	"$tree/tools/expected/verdicts" >"$tmp/v" && mv "$tmp/v" "$tree/tools/expected/verdicts"
changed_only module_async.c runner/cases_added.c modules/ma_added.c \
	tools/expected/verdicts

# ---- a row reusing a function: three files ---------------------------------

# module_async.c: a row after bfq's, of the same shape.
awk -v new="$BRD" '
	{ print }
	/MODULES\("bfq"\) },$/ && !done {
		print "\t{ \"" new "\", UNSAFE_IF_ALWAYS_SYNC,"
		print "\t  case_request_module_from_async,"
		print "\t  MODULES(\"ma_request\"), MODULES(\"brd\") },"
		done = 1
	}' "$tree/module_async.c" >"$tmp/c" && mv "$tmp/c" "$tree/module_async.c"
# tools/expected/verdicts: bfq's row under the new name.
awk -v new="$BRD" '
	{ print }
	$1 == "request_module_from_async_bfq" { $1 = new; print }' \
	"$tree/tools/expected/verdicts" >"$tmp/v" && mv "$tmp/v" "$tree/tools/expected/verdicts"
printf '%s\n' "# The RAM disk driver $BRD requests." "CONFIG_BLK_DEV_RAM=m" >>"$tree/config"
changed_only config module_async.c tools/expected/verdicts

# ---- what follows ----------------------------------------------------------

if make -s -C "$tree" OUTPUT="$tree/build" all >"$tmp/build.log" 2>&1; then
	pass "the runner builds with the new rows"
else
	fail "the runner does not build with the new rows: $(tail -n 3 "$tmp/build.log")"
fi
runner=$tree/build/module_async
"$runner" --list 2>/dev/null | awk '{ print $1 }' >"$tmp/list" || true
for pair in chained_async_init_completes:$NEW request_module_from_async_bfq:$BRD; do
	if grep -A1 -x "${pair%%:*}" "$tmp/list" | grep -qx "${pair#*:}"; then
		pass "--list has ${pair#*:} after ${pair%%:*}"
	else
		fail "--list lacks ${pair#*:} after ${pair%%:*}"
	fi
done
if "$runner" --list-modules 2>/dev/null | grep -qx brd; then
	pass "--list-modules names brd"
else
	fail "--list-modules does not name brd"
fi
"$tree/tools/expected/expected" column stock >"$tmp/expected" 2>&1 || true
for want in "$NEW ok" "$BRD skip"; do
	if grep -qx "$want" "$tmp/expected"; then
		pass "the expected table's stock column has $want"
	else
		fail "the expected table's stock column lacks $want"
	fi
done
if "$tree/tools/tests/test-driver.sh" "$runner" >"$tmp/driver.log" 2>&1; then
	pass "the driver's tests accept the new runner (cases, table, settings' bound)"
else
	fail "the driver's tests: $(grep '^FAIL' "$tmp/driver.log" | tr '\n' ' ')"
fi

# The initramfs for the stock kernel, as vm.sh makes it, holds the new
# module (modules/'s every ma_*.c) and brd.ko (config).
entry=$("$TOOLS/kernel/fetch-kernel.sh" 2>/dev/null | tail -n 1)
stage=$tmp/stage
mkdir -p "$stage/modules"
if cp "$tree/module_async.sh" "$runner" "$tree/config" "$tree/settings" "$stage/" &&
   make -s -C "$tree" modules KDIR="$entry/kdir" >"$tmp/modules.log" 2>&1 &&
   cp "$tree"/modules/*.ko "$stage/modules/" &&
   "$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$stage" \
	--out "$tmp/initrd.gz" >"$tmp/initrd.log" 2>&1 &&
   gzip -dc "$tmp/initrd.gz" | cpio -it --quiet 2>/dev/null >"$tmp/initrd.list"; then
	for ko in ma_added brd; do
		if grep -q "/$ko\.ko$" "$tmp/initrd.list"; then
			pass "the stock kernel's initramfs packs $ko.ko"
		else
			fail "no $ko.ko in the stock kernel's initramfs"
		fi
	done
else
	fail "no initramfs for the stock kernel"
	tail -n 5 "$tmp/modules.log" "$tmp/initrd.log" 2>/dev/null | sed 's/^/    /'
fi

# The new case in a VM of the stock kernel, as the table has it.
if "$tree/tools/vm/vm.sh" --kernel stock --out "$tmp/vm" -- --case "$NEW" \
	>"$tmp/vm.log" 2>&1 &&
   [ "$("$TOOLS/ktap/ktap" verdict "$NEW" "$tmp/vm/results.ktap")" = ok ]; then
	pass "$NEW runs in a VM of the stock kernel: ok, as the table has it"
else
	fail "$NEW in a VM of the stock kernel: not ok, or no run"
	tail -n 8 "$tmp/vm.log" | sed 's/^/    /'
fi

# A table naming more test modules than MA_TEST_MODULES_MAX stops the
# runner, saying so, even for --list.
awk '
	{ print }
	/MODULES\("ma_chained"\), NULL },$/ {
		printf "\t{ \"too_many\", SAFE, case_chained_async_init_completes,\n\t  MODULES("
		for (i = 1; i <= 16; i++) printf "\"ma_x%d\"%s", i, i < 16 ? ", " : ""
		print "), NULL },"
	}' "$tree/module_async.c" >"$tmp/c" && mv "$tmp/c" "$tree/module_async.c"
if make -s -C "$tree" OUTPUT="$tree/build" "$runner" >"$tmp/build.log" 2>&1 &&
   ! "$runner" --list >"$tmp/list" 2>&1 &&
   grep -q "more than MA_TEST_MODULES_MAX ([0-9]*) module names" "$tmp/list"; then
	pass "a table naming too many test modules stops the runner, saying so"
else
	fail "a table naming too many test modules: $(tail -n 2 "$tmp/list" "$tmp/build.log")"
fi
checks_summary
