#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-add-case.sh - cases added as README.md's "Adding a case" says, on a copy
# of the tree: one in four files, a row reusing a function in three, up to the new
# case in a VM of the stock kernel; too many test modules in a row stop the runner.
#
# usage: test-add-case.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"

readonly NEW=added_jobs_done_on_return
readonly BRD=request_module_from_async_brd

tree=$tmp/tree
mkdir -p "$tree"
(cd "$TOP" && git ls-files -z | cpio -pdm0 --quiet "$tree")
git -C "$tree" init -q

# commit MESSAGE: every change of the copy committed.
commit()
{
	git -C "$tree" add -A && git -C "$tree" -c user.name=t -c user.email=t@t commit -qm "$1"
}
commit base

# edit FILE AWK-ARG...: FILE of the copy rewritten by awk AWK-ARG....
edit()
{
	awk "${@:2}" "$tree/$1" >"$tmp/edit" && mv "$tmp/edit" "$tree/$1"
}

# changed_only FILE...: the copy's change, committed, is FILE... alone.
changed_only()
{
	local changed want

	commit "$*"
	changed=$(git -C "$tree" diff --name-only HEAD~ HEAD | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	echo "it changed $changed" >"$tmp/err"
	check "the case is $# files: $want" test "$changed" = "$want"
}

# module_async.c: its declaration and row, after chained_async_init_completes's.
edit module_async.c -v new="$NEW" '
	/^case_fn case_chained_async_init_completes;$/ { print "case_fn case_" new ";" }
	{ print }
	/MODULES\("ma_chained"\), NULL, NULL },$/ {
		print "\t{ \"" new "\", SAFE, case_" new ","
		print "\t  MODULES(\"ma_added\"), NULL, NULL },"
	}'
# runner/cases_added.c: ma_added's jobs done at its load's return; a new file
# begins with the tree's SPDX line.
{ head -n 1 "$tree/modules/ma_plain.c" && cat <<EOF; } >"$tree/runner/cases_added.c"
/* cases_added.c - $NEW: ma_added's four jobs done when its load returns */
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
# shellcheck disable=SC2016 # awk, not shell
edit tools/expected/verdicts -v new="$NEW" '
	{ print }
	$1 == "async_init_completes" { $1 = new; row = $0 }
	$1 == "chained_async_init_completes" { print row }'
changed_only module_async.c runner/cases_added.c modules/ma_added.c \
	tools/expected/verdicts

# module_async.c: a row after bfq's, of the same shape.
edit module_async.c -v new="$BRD" '
	{ print }
	/MODULES\("bfq"\), NULL },$/ && !done++ {
		print "\t{ \"" new "\", UNSAFE_IF_ALWAYS_SYNC,"
		print "\t  case_request_module_from_async,"
		print "\t  MODULES(\"ma_request\"), MODULES(\"brd\"), NULL },"
	}'
# tools/expected/verdicts: bfq's row under the new name.
# shellcheck disable=SC2016 # awk, not shell
edit tools/expected/verdicts -v new="$BRD" '
	{ print }
	$1 == "request_module_from_async_bfq" { $1 = new; print }'
printf '%s\n' "# The RAM disk driver $BRD requests." "CONFIG_BLK_DEV_RAM=m" >>"$tree/config"
changed_only config module_async.c tools/expected/verdicts

run_to "$tmp/build.log" make -s -C "$tree" OUTPUT="$tree/build" all
details=$tmp/build.log check "the runner builds with the new rows" test "$rc" -eq 0
runner=$tree/build/module_async
"$runner" --list 2>/dev/null | awk '{ print $1 }' >"$tmp/list" || true
# follows A B: --list has B right after A.
follows() { grep -A1 -x "$1" "$tmp/list" | grep -qx "$2"; }
verify "--list has $NEW after chained_async_init_completes" \
	follows chained_async_init_completes "$NEW"
verify "--list has $BRD after request_module_from_async_bfq" \
	follows request_module_from_async_bfq "$BRD"
"$tree/tools/expected/expected" column stock >"$tmp/expected" 2>&1 || true
for want in "$NEW ok" "$BRD skip"; do
	verify "the expected table's stock column has $want" grep -qx "$want" "$tmp/expected"
done
run_to "$tmp/driver.log" "$tree/tools/tests/test-driver.sh" "$runner"
details=$tmp/driver.log check \
	"the driver's tests accept the new runner (cases, table, settings' bound)" test "$rc" -eq 0

# The new case in a VM of the stock kernel; its initramfs holds the new module
# (modules/'s every ma_*.c) and brd.ko (config).
run_to "$tmp/vm.log" "$tree/tools/vm/vm.sh" --kernel stock --out "$tmp/vm" -- --case "$NEW"
verdict=$("$KTAP" verdict "$NEW" "$tmp/vm/results.ktap" 2>/dev/null) || verdict=''
details=$tmp/vm.log check "$NEW runs in a VM of the stock kernel: ok, as the table has it" \
	test "$rc" -eq 0 -a "$verdict" = ok
gzip -dc "$tmp/vm/initramfs.cpio.gz" | cpio -it --quiet >"$tmp/initrd.list" 2>/dev/null || true
for ko in ma_added brd; do
	details=$tmp/vm.log check "the stock kernel's initramfs packs $ko.ko" \
		grep -q "/$ko\.ko$" "$tmp/initrd.list"
done

# A row naming more test modules than MA_TEST_MODULES_MAX stops the runner, even --list.
max=$(sed -n 's/^#define MA_TEST_MODULES_MAX\t*//p' "$tree/runner/runner.h")
edit module_async.c -v max="$max" '
	{ print }
	/MODULES\("ma_chained"\), NULL, NULL },$/ {
		printf "\t{ \"too_many\", SAFE, case_chained_async_init_completes,\n\t  MODULES("
		for (i = 1; i <= max; i++) printf "\"ma_x%d\"%s", i, i < max ? ", " : ""
		print "), NULL, NULL },"
	}'
too_many_refused()
{
	make -s -C "$tree" OUTPUT="$tree/build" "$runner" >"$tmp/list" 2>&1 &&
		! "$runner" --list >>"$tmp/list" 2>&1 &&
		grep -q "more than MA_TEST_MODULES_MAX ([0-9]*) module names" "$tmp/list"
}
details=$tmp/list check "a table naming too many test modules stops the runner, saying so" \
	too_many_refused
checks_summary
