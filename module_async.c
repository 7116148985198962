// SPDX-License-Identifier: GPL-2.0
/*
 * module_async - how module loading interacts with async function calls
 *
 * do_init_module() waits for async work (kernel/async.c) after a module's
 * init, so that everything a module started has finished when modprobe
 * returns. Which work it waits for has changed over the years: all of it
 * (before 3.8, and again since 5.17 unless the module has async_probe), or
 * only when the module's init used async itself (3.8 to 5.16, the
 * PF_USED_ASYNC flag). Both policies have a known hole: waiting for all of it
 * deadlocks when an async job loads a module synchronously (request_module()
 * from device probing, or writing a modular I/O scheduler's name to
 * /sys/block/<dev>/queue/scheduler); waiting only after the init's own
 * async_schedule() misses work the init hands to a worker, and still
 * deadlocks when the nested module uses async itself.
 *
 * What a load (finit_module(), so modprobe) promises its caller, and the
 * cases that hold each promise, each checked at the moment the load
 * returns, never "eventually":
 *  (a) every async call the init made is done when the load returns: made
 *      by the init itself (async_init_completes, also beside an older held
 *      job; slow_own_work_waited: work that takes seconds;
 *      same_task_loads_after_failed_init: a task's load after its failed
 *      one), by a worker or probe it started (async_worker_init_completes),
 *      or chained from those calls (chained_async_init_completes,
 *      scsi_debug_disks_ready_on_return: a SCSI scan's disks;
 *      worker_chain_completes: from the worker's; a work item an async
 *      job of the init flushes, workqueue_handoff_from_job_completes); a
 *      nested load's own (nested_async_load, init_async_job_loads_module);
 *  (b) a load never waits for the async job that requested it
 *      (request_module_from_async_*, elevator_switch_from_async,
 *      request_module_twice_from_async, nested_async_load,
 *      init_async_job_loads_module), unless that job was queued while the
 *      load's own init ran (request_module_being_loaded_from_async: ok
 *      with the 3.8 flag; unsafe where such work is awaited);
 *  (c) the kernel warns on a synchronous request from async
 *      (warn_on_sync_request_from_async);
 *  (d) async_probe skips the wait (async_probe_skips_unrelated_async,
 *      request_module_from_async_async_probe), for the module's own work
 *      too (async_probe_own_work_not_waited);
 *  (e) a load does not wait for async work unrelated to it, the 3.8 goal
 *      (plain_load_skips_unrelated_async: a skip where every load waits
 *      for all async work; concurrent_loads_wait_for_their_own: another
 *      load's, its init at the same time, a skip likewise;
 *      unrelated_async_during_init;
 *      freeze_during_held_load: tasks can be frozen meanwhile, an XFAIL
 *      where every load waits for all async work), nor for another load's
 *      (load_storm: eight loads at once, each returning once its own work
 *      is done; a skip where a load that uses async waits for all).
 *
 * Each case below checks one of these behaviours with the test modules in
 * modules/ and reports one KTAP line. An async job that must wait does so on
 * a gate (modules/ma_job.h) that this runner opens, so a policy can be
 * measured without wedging the kernel: hold a gate, load, see the load
 * held or returned, open the gate, see the load return. A load is held when
 * its task is seen blocked in async_synchronize_* (its kernel stack, or its
 * wchan); only where neither can be read does a load running ten times a
 * plain load's time count as held ("# held:" says which). Loads and
 * unloads run in child processes under a watchdog (lib/child.h). The policy
 * is named from facts so measured: which async work a load waits for (its
 * init's own, its init's worker's, unrelated work, and work queued before a
 * load whose init uses async), whether async_probe skips that wait, and
 * whether a load returned with its own async work undone ("# facts:",
 * "# policy:"); facts that contradict each other earn no policy's name and
 * run no unsafe case. Cases that would deadlock
 * this kernel for good ("unsafe") run only where those facts say they
 * cannot, or with --allow-deadlock in a throw-away VM.
 *
 * A genuine deadlock is a verdict, not a hung run. A case whose async job
 * requests a module watches the blocked tasks' stacks: the same complete
 * wait-for cycle (the job in request_module() waiting for modprobe,
 * modprobe in do_init_module()'s async_synchronize_* waiting for the job)
 * at two looks apart, the job still not done, proves the deadlock. A load
 * or job that does not return within the bound (--timeout-ms) is one too
 * if, at two looks, a task is seen blocked in async_synchronize_* or the
 * cycle is seen; the bound alone is not: such a wait is a plain failure,
 * "still running, no deadlock seen". A deadlock's case prints its
 * evidence as "#" lines (the kernel's warnings and hung-task reports since it began, the stuck
 * tasks' stacks, the kernel's dump of blocked tasks from sysrq w, and the
 * wait-for cycle those stacks show), the time to the proof (or the
 * bound), then "not ok N <case> # TIMEOUT", its cause and "# kernel wedged
 * by <case>". The kernel cannot load or unload anything after that, so
 * nothing more is tried: no remaining case runs or gets a result, each is
 * named "not run" (lib/ktap.h shows the lines), and the run ends short of
 * its plan with the totals and exit status 1. A harness can run the
 * remaining cases on a fresh kernel and merge the documents.
 *
 * No case sleeps for a fixed time; each prints its guest time ("# time:").
 * Everything the runner changes is put back: modules it loaded are
 * unloaded, knobs get their saved values, gates are opened; and checked:
 * a case that leaves the machine otherwise than it found it fails
 * (runner/found.c). --repeat runs the cases again (runner/repeat.c);
 * --latency measures a load beside many held async jobs, --storm many loads
 * at once (runner/latency.c).
 *
 * This file is the case table and the run (options, run_case(), the
 * cleanup after each case); the probes, the prerequisites, the cases and
 * the deadlock evidence are in runner/ (runner/runner.h says which file
 * holds what).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"

#include "runner/runner.h"
#include "lib/identity.h"

/* Bound of every wait that should end; a failing case pays it once. */
#define DEFAULT_TIMEOUT_MS	10000

/*
 * The least --timeout-ms: a bound must cover what an honest load takes,
 * or a healthy kernel's load outlasts it (10 ms made 14 cases of a
 * healthy kernel fail on their bound). The slowest wait of a case that
 * passes is a request_module() from an async job: modprobe run by the
 * kernel, its load and init. Under TCG on this project's 2-core host it
 * took 28-33 ms, request_module_from_async_async_probe 60-78 ms in all;
 * 1000 ms is 30 times the round trip, room for a busy host, a debug
 * kernel or a slow disk. (A bound that expires is still no deadlock
 * without its evidence: see verdict(), runner/case.c.)
 */
#define MIN_TIMEOUT_MS		1000
#define MAX_TIMEOUT_MS		3600000

/* Most repetitions --repeat takes (repeat.c). */
#define REPEAT_MAX		1000

/*
 * Set (to anything) by module_async.sh: a missing prerequisite of the
 * whole suite is then kselftest's whole-suite SKIP, "1..0 # SKIP <reason>"
 * and exit 4, in the driver's wording, instead of a plan with every case
 * skipped. The runner checks the prerequisites either way, in one place
 * (runner/prereq.c).
 */
#define WHOLE_SUITE_SKIP_ENV	"MODULE_ASYNC_WHOLE_SUITE_SKIP"

/* ---- the cases --------------------------------------------------------- */

/* The cases' functions (runner/cases_*.c), one a row's or several rows'. */
case_fn case_async_init_completes;
case_fn case_async_worker_init_completes;
case_fn case_plain_load_skips_unrelated_async;
case_fn case_async_probe_skips_unrelated_async;
case_fn case_request_module_from_async;
case_fn case_request_module_from_async_async_probe;
case_fn case_elevator_switch_from_async;
case_fn case_nested_async_load;
case_fn case_warn_on_sync_request_from_async;
case_fn case_unrelated_async_during_init;
case_fn case_request_module_twice_from_async;
case_fn case_init_async_job_loads_module;
case_fn case_chained_async_init_completes;
case_fn case_scsi_debug_disks_ready_on_return;
case_fn case_request_module_being_loaded_from_async;
case_fn case_freeze_during_held_load;
case_fn case_async_probe_own_work_not_waited;
case_fn case_slow_own_work_waited;
case_fn case_concurrent_loads_wait_for_their_own;
case_fn case_same_task_loads_after_failed_init;
case_fn case_worker_chain_completes;
case_fn case_workqueue_handoff_from_job_completes;
case_fn case_load_storm;

/*
 * The cases, in the order they run. Their names are an interface (CI
 * systems track results by name): exact, in this order. Each row names the
 * test modules its case loads, the kernel's own modules it may load
 * (several: the first that can be loaded here; for the SCSI case, all),
 * and what it does to the whole machine, if anything (--intrusive).
 */
static const struct ma_case cases[] = {
	{ "async_init_completes", SAFE, case_async_init_completes,
	  MODULES("ma_async_init", "ma_gate"), NULL, NULL },
	{ "async_worker_init_completes", SAFE, case_async_worker_init_completes,
	  MODULES("ma_worker_async"), NULL, NULL },
	{ "plain_load_skips_unrelated_async", SAFE,
	  case_plain_load_skips_unrelated_async,
	  MODULES("ma_gate", "ma_plain"), NULL, NULL },
	{ "async_probe_skips_unrelated_async", SAFE,
	  case_async_probe_skips_unrelated_async,
	  MODULES("ma_gate", "ma_plain"), NULL, NULL },
	{ "request_module_from_async_null_blk", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async,
	  MODULES("ma_request"), MODULES("null_blk"), NULL },
	{ "request_module_from_async_kyber-iosched", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async,
	  MODULES("ma_request"), MODULES("kyber-iosched"), NULL },
	{ "request_module_from_async_bfq", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async,
	  MODULES("ma_request"), MODULES("bfq"), NULL },
	{ "request_module_from_async_async_probe", SAFE,
	  case_request_module_from_async_async_probe,
	  MODULES("ma_request"), MODULES("kyber-iosched", "bfq", "null_blk"), NULL },
	{ "elevator_switch_from_async", UNSAFE_IF_ALWAYS_SYNC,
	  case_elevator_switch_from_async,
	  MODULES("ma_elv"), MODULES("kyber-iosched", "bfq", "null_blk"), NULL },
	{ "nested_async_load", UNSAFE, case_nested_async_load,
	  MODULES("ma_request", "ma_nested"), NULL, NULL },
	{ "warn_on_sync_request_from_async", SAFE,
	  case_warn_on_sync_request_from_async, MODULES("ma_request"), NULL,
	  "makes the kernel warn (a WARNING taints it)" },
	{ "unrelated_async_during_init", SAFE,
	  case_unrelated_async_during_init, MODULES("ma_gate", "ma_hold"), NULL, NULL },
	{ "request_module_twice_from_async", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_twice_from_async,
	  MODULES("ma_request", "ma_request_twin", "ma_hold"), NULL, NULL },
	{ "init_async_job_loads_module", UNSAFE,
	  case_init_async_job_loads_module,
	  MODULES("ma_init_request", "ma_nested"), NULL, NULL },
	{ "chained_async_init_completes", SAFE,
	  case_chained_async_init_completes, MODULES("ma_chained"), NULL, NULL },
	{ "scsi_debug_disks_ready_on_return", SAFE,
	  case_scsi_debug_disks_ready_on_return, NULL,
	  MODULES("sd_mod", "scsi_debug"), NULL },
	{ "request_module_being_loaded_from_async", UNSAFE_IF_DURING_AWAITED,
	  case_request_module_being_loaded_from_async,
	  MODULES("ma_hold", "ma_request"), NULL, NULL },
	{ "freeze_during_held_load", SAFE, case_freeze_during_held_load,
	  MODULES("ma_gate", "ma_plain"), NULL,
	  "freezes every task for a moment (the freezer's test mode)" },
	{ "async_probe_own_work_not_waited", SAFE,
	  case_async_probe_own_work_not_waited, MODULES("ma_async_init"), NULL, NULL },
	{ "slow_own_work_waited", SAFE, case_slow_own_work_waited,
	  MODULES("ma_slow"), NULL, NULL },
	{ "concurrent_loads_wait_for_their_own", SAFE,
	  case_concurrent_loads_wait_for_their_own,
	  MODULES("ma_storm_0", "ma_storm_1"), NULL, NULL },
	{ "worker_chain_completes", SAFE, case_worker_chain_completes,
	  MODULES("ma_worker_chain"), NULL, NULL },
	{ "workqueue_handoff_from_job_completes", SAFE,
	  case_workqueue_handoff_from_job_completes,
	  MODULES("ma_wq_handoff"), NULL, NULL },
	{ "load_storm", SAFE, case_load_storm,
	  MODULES("ma_gate", "ma_storm_0", "ma_storm_1", "ma_storm_2",
		  "ma_storm_3", "ma_storm_4", "ma_storm_5", "ma_storm_6",
		  "ma_storm_7"), NULL, NULL },
	{ "same_task_loads_after_failed_init", SAFE,
	  case_same_task_loads_after_failed_init,
	  MODULES("ma_fail", "ma_async_init"), NULL, NULL },
};

/*
 * Add the names of @list not in @set (NULL-ended, room for @max) to it.
 * A name with no room left ends the run: no list is cut short.
 */
static void names_add(const char **set, size_t max, const char * const *list)
{
	size_t n;

	for (; list && *list; list++) {
		for (n = 0; set[n] && strcmp(set[n], *list); n++)
			;
		if (!set[n] && n == max)
			ksft_exit_fail_msg("%s: more than MA_TEST_MODULES_MAX (%zu) module names\n",
					   *list, max);
		if (!set[n])
			set[n] = *list;
	}
}

/* The test modules of the run, in the order the cases first load them. */
static void suite_test_modules(struct suite *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		names_add(s->test_modules, MA_TEST_MODULES_MAX,
			  cases[i].modules);
	names_add(s->test_modules, MA_TEST_MODULES_MAX, probe_modules);
}

/* The kernel's modules the cases may load, each once, NULL-ended. */
static const char **kernel_modules(void)
{
	static const char *names[MA_TEST_MODULES_MAX + 1];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		names_add(names, MA_TEST_MODULES_MAX, cases[i].kernel_modules);
	return names;
}

/* The kernel's modules the cases may load, one a line: for host tools. */
static void list_kernel_modules(void)
{
	const char **names = kernel_modules();
	size_t i;

	for (i = 0; names[i]; i++)
		printf("%s\n", names[i]);
}

static const char *safety_name(enum safety safety)
{
	switch (safety) {
	case SAFE:
		return "safe";
	case UNSAFE_IF_ALWAYS_SYNC:
		return "unsafe-if-always-sync";
	case UNSAFE_IF_DURING_AWAITED:
		return "unsafe-if-during-awaited";
	case UNSAFE:
	default:
		return "unsafe";
	}
}

/* ---- running a case ---------------------------------------------------- */

static void case_begin(struct case_ctx *ctx)
{
	int ret;

	ctx->kmsg_ok = !kmsg_open(&ctx->kmsg, false);
	if (ctx->kmsg_ok)
		kmsg_reset(&ctx->kmsg, "[ma_");
	ret = modlist_read(&ctx->before);
	if (ret) {
		diag("cannot list the loaded modules: %s", strerror(-ret));
		ctx->before.nr = 0;
	}
	found_case_begin();
}

/* The suite's modules: the test modules, then the kernel's; NULL-ended. */
static const char * const *suite_modules(const struct suite *s)
{
	static const char *names[2 * MA_TEST_MODULES_MAX + 1];

	if (!names[0]) {
		names_add(names, 2 * MA_TEST_MODULES_MAX, s->test_modules);
		names_add(names, 2 * MA_TEST_MODULES_MAX, kernel_modules());
	}
	return names;
}

/*
 * Put back what the case changed: open every gate, let every job finish,
 * unload the suite's modules loaded since the case began and those they
 * use (never another's, udev's say). The case itself restored the knobs it
 * changed. After a wedge nothing is waited for or unloaded: every unload
 * would hang (delete_module() syncs all async work too).
 */
static void case_cleanup(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	enum ktap_kind kind;
	long started;
	size_t i;
	int ret;

	/* A gate is a test module's knob "open" (modules/ma_job.h). */
	for (i = 0; s->test_modules[i]; i++)
		if (knob_exists(s->test_modules[i], "open"))
			gate_open(s->test_modules[i]);
	for (i = 0; s->test_modules[i] && !ktap_wedged_by(); i++) {
		if (knob_read_long(s->test_modules[i], "started", &started) ||
		    !started || !job_wait_done(s, s->test_modules[i]))
			continue;
		if (verdict_given(ctx))
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_WEDGED,
			"%s's async job did not finish within %d ms of the case's end",
			s->test_modules[i], s->timeout_ms);
	}
	if (ktap_wedged_by()) {
		diag("not unloading anything: every later load and unload would hang");
		return;
	}
	ret = modlist_unload_new(&ctx->before, suite_modules(s), s->timeout_ms);
	if (ret == -ETIMEDOUT) {
		if (verdict_given(ctx))
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_WEDGED,
			"unloading what the case loaded did not return within %d ms",
			s->timeout_ms);
	} else if (ret) {
		diag("could not unload every module this case loaded");
		kind = ctx->verdict.kind;
		if (kind != KTAP_PASS && kind != KTAP_SKIP && kind != KTAP_XFAIL)
			return;
		if (kind != KTAP_PASS)
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_FAIL,
			"did not leave the machine as found: %d module(s) left loaded",
			ret);
	}
}

static void case_evidence(struct case_ctx *ctx)
{
	if (timed_out(ctx))
		deadlock_evidence(ctx);
	else if (ctx->verdict.kind == KTAP_FAIL)
		case_log(ctx);
}

/*
 * Run one case, row @idx of the table, in repetition @k, and print its
 * result. After a case that wedged the kernel the rest are not run:
 * ktap_may_run() names them, and they get no result. One that did not leave
 * the machine as it found it fails (found.c).
 */
static void run_case(struct suite *s, const struct ma_case *c, size_t idx,
		     unsigned int k)
{
	static struct case_ctx ctx;
	bool timed_out_in_case;
	char buf[160];
	const char *name = repeat_name(s, c->name, k, buf, sizeof(buf));

	if (!ktap_may_run(name))
		return;
	memset(&ctx, 0, sizeof(ctx));
	ctx.suite = s;
	ctx.c = c;
	ctx.verdict.kind = KTAP_PASS;
	ctx.begin_us = now_us();

	if (s->skip_all[0]) {
		verdict(&ctx, KTAP_SKIP, "%s", s->skip_all);
	} else {
		case_begin(&ctx);
		if (!skip_if_intrusive(&ctx) && !skip_if_unsafe(&ctx))
			c->run(&ctx);
		case_evidence(&ctx);
		timed_out_in_case = timed_out(&ctx);
		case_cleanup(&ctx);
		/* A job or unload that did not finish in the cleanup. */
		if (!timed_out_in_case && timed_out(&ctx)) {
			if (ctx.kmsg_ok)
				kmsg_reset(&ctx.kmsg, "[ma_");
			deadlock_evidence(&ctx);
		}
		kmsg_close(&ctx.kmsg);
		found_case_check(&ctx);
		diag("time: %.1f ms", ms(now_us() - ctx.begin_us));
	}
	repeat_compare(&ctx, idx, k);
	ktap_result(name, &ctx.verdict);
}

/* --latency's and --storm's result: run as a case is, not one of the table's. */
static const struct ma_case latency_case = {
	LATENCY_CASE, SAFE, latency_run, MODULES("ma_gate", "ma_plain"), NULL,
	NULL,
};

/* ---- main -------------------------------------------------------------- */

static struct suite suite = {
	.timeout_ms = DEFAULT_TIMEOUT_MS,
	.baseline_us = -1,
	.policy = POLICY_UNPROBED,
	.intrusive = -1,
};

/*
 * On SIGINT/SIGTERM: release held jobs, undo async_probe and the freezer's
 * test mode, then go: by open(), write(), unlink() and the like alone
 * (knob.h). A load's child resets both signals (lib/child.c).
 */
static void on_signal(int sig)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; suite.test_modules[i]; i++) {
		if (knob_path(path, sizeof(path), suite.test_modules[i], "open"))
			continue;
		sysfs_write(path, "1");
	}
	async_probe_restore();
	freeze_knobs_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"Check how module loading interacts with async function calls.\n"
		"Prints KTAP; exits 0 (pass), 1 (a case failed, or bad arguments),\n"
		"4 (all skipped); an XFAIL, a known failure of this kernel, fails\n"
		"nothing.\n"
		"\n"
		"  -h, --help            this text\n"
		"  -l, --list            check the other arguments, list the cases\n"
		"                        and their safety, then exit\n"
		"      --list-modules    likewise, the kernel's modules the cases load\n"
		"  -c, --case NAME       run only this case (repeatable)\n"
		"  -t, --timeout-ms N    bound of every wait (default %d, at\n"
		"                        least %d: an honest request_module()\n"
		"                        from async takes 30 ms under QEMU TCG)\n"
		"      --repeat N        run the cases N times (1 to %d), each\n"
		"                        repetition's verdicts the first's; the\n"
		"                        results of repetition K>1 named <case>.K,\n"
		"                        then repeat_drift: Slab, free memory and\n"
		"                        modules from the first's end to the last's\n"
		"      --latency N,...   the result latency: a plain load beside N\n"
		"                        held unrelated async jobs (1 to %d), for\n"
		"                        each N; no case runs but those --case names\n"
		"      --storm N,...     in the result latency: N loads at once\n"
		"                        (1 to %d), each N; as --latency\n"
		"      --allow-deadlock  run unsafe cases even where they deadlock\n"
		"                        the kernel for good (throw-away VMs only)\n"
		"      --intrusive yes|no  run the cases that freeze every task\n"
		"                        or make the kernel warn (default: in a\n"
		"                        virtual machine only)\n"
		"      --facts LIST      what a load waits for, as an earlier run\n"
		"                        on this kernel printed it (\"# facts:\"):\n"
		"                        measured all the same, and where they\n"
		"                        differ said; never taken for measured\n"
		"  -m, --modules-dir DIR the test modules (default: the runner's\n"
		"                        directory + /modules)\n"
		"\n"
		"A wait-for cycle seen twice in the stacks, or a load or async job\n"
		"that does not return within the timeout while a task is seen\n"
		"blocked in async_synchronize_* (twice), is a deadlock; a wait\n"
		"that outlasts the timeout with neither seen is a plain not ok,\n"
		"\"still running, no deadlock seen\". A deadlock's case\n"
		"prints its evidence (stacks, the sysrq w dump, kernel warnings,\n"
		"the wait-for cycle), then\n"
		"  # <case>: TIMEOUT after <seconds>s (to the proof, or the bound)\n"
		"  not ok N <case> # TIMEOUT\n"
		"  # <case>: TIMEOUT <what did not return>\n"
		"  # kernel wedged by <case>\n"
		"and, since every later load and unload would hang, the remaining\n"
		"cases get no result; each is named\n"
		"  # <name>: not run: kernel wedged by <case>\n"
		"then \"Bail out! kernel wedged by <case>: ...\", the totals\n"
		"and exit status 1. Nothing is unloaded:\n"
		"reboot the machine (echo b > /proc/sysrq-trigger), then run the\n"
		"remaining cases with --case.\n"
		"\n"
		"After each case and after the last, the loaded modules, the\n"
		"knobs the suite writes and the null_blk devices must be as\n"
		"they were before (\"# left as found:\"): a case that changed\n"
		"them fails, a run that did exits 1.\n",
		prog, DEFAULT_TIMEOUT_MS, MIN_TIMEOUT_MS, REPEAT_MAX,
		LATENCY_JOBS_MAX, STORM_LOADS_MAX);
}

static void list_cases(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		printf("%s %s\n", cases[i].name, safety_name(cases[i].safety));
}

static int case_index(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!strcmp(cases[i].name, name))
			return i;
	return -1;
}

/* A whole number from @min to @max. */
static bool parse_number(const char *arg, long min, long max, long *value)
{
	char *end;

	errno = 0;
	*value = strtol(arg, &end, 10);
	return !errno && end != arg && !*end && *value >= min && *value <= max;
}

/* A whole number from 1 to @max. */
static bool parse_count(const char *arg, long max, long *value)
{
	return parse_number(arg, 1, max, value);
}

/* Why --timeout-ms @arg is refused: "below" only for a number below the floor. */
static void timeout_refused(const char *prog, const char *arg)
{
	long n;

	fprintf(stderr, "%s: bad --timeout-ms: %s (%d to %d ms)\n", prog, arg,
		MIN_TIMEOUT_MS, MAX_TIMEOUT_MS);
	if (parse_number(arg, 0, MIN_TIMEOUT_MS - 1, &n))
		fprintf(stderr, "%s: below %d ms an honest load may outlast it\n",
			prog, MIN_TIMEOUT_MS);
}

static void default_modules_dir(struct suite *s, const char *argv0)
{
	char self[PATH_MAX], *copy;
	ssize_t n;

	if (strchr(argv0, '/')) {
		copy = strdup(argv0);
		snprintf(s->modules_dir, sizeof(s->modules_dir), "%s/modules",
			 copy ? dirname(copy) : ".");
		free(copy);
		return;
	}
	/* Found in $PATH: ask the kernel where the binary is. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(s->modules_dir, sizeof(s->modules_dir), "%s/modules",
		 n > 0 ? dirname(self) : ".");
}

enum {
	OPT_ALLOW_DEADLOCK = 256,
	OPT_LIST_MODULES,
	OPT_REPEAT,
	OPT_LATENCY,
	OPT_STORM,
	OPT_INTRUSIVE,
	OPT_FACTS,
};

static const struct option options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "list", no_argument, NULL, 'l' },
	{ "list-modules", no_argument, NULL, OPT_LIST_MODULES },
	{ "case", required_argument, NULL, 'c' },
	{ "timeout-ms", required_argument, NULL, 't' },
	{ "allow-deadlock", no_argument, NULL, OPT_ALLOW_DEADLOCK },
	{ "modules-dir", required_argument, NULL, 'm' },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "latency", required_argument, NULL, OPT_LATENCY },
	{ "storm", required_argument, NULL, OPT_STORM },
	{ "intrusive", required_argument, NULL, OPT_INTRUSIVE },
	{ "facts", required_argument, NULL, OPT_FACTS },
	{ NULL, 0, NULL, 0 },
};

/*
 * getopt_long takes any unambiguous prefix of a long option, which the
 * suite's other readers of its arguments (module_async.sh, the tools that
 * run it in a VM) would not know for the option it is: names are whole.
 * options[@idx] was just read from argv[optind - 1], or from the argument
 * before when its value came apart.  Returns the prefix given, or NULL.
 */
static const char *option_prefix(char *argv[], int idx)
{
	const struct option *o = &options[idx];
	const char *arg = argv[optind - 1];
	size_t len;

	if (o->has_arg == required_argument && optarg == arg)
		arg = argv[optind - 2];
	len = strcspn(arg + 2, "=");
	if (len == strlen(o->name) && !strncmp(arg + 2, o->name, len))
		return NULL;
	return arg;
}

/* What the command line asked for, besides what it set in the suite. */
struct options {
	bool selected[ARRAY_SIZE(cases)];
	bool any_selected;
	bool modules_dir_set;
	int list;		/* 'l' or OPT_LIST_MODULES: list, then exit */
};

/* A usage error: its line, the usage, KSFT_FAIL (runner.sh reads 2 as XFAIL). */
static int refuse(const char *prog, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "%s: ", prog);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	usage(stderr, prog);
	return KSFT_FAIL;
}

/* Parse the command line into @o and the suite: 0, else the exit status. */
static int parse_options(int argc, char *argv[], struct options *o)
{
	int opt, idx, longidx = -1;
	const char *prefix;
	long count;

	while ((opt = getopt_long(argc, argv, "hlc:t:m:", options,
				  &longidx)) != -1) {
		prefix = longidx >= 0 ? option_prefix(argv, longidx) : NULL;
		if (prefix)
			return refuse(argv[0], "unknown option: %s (names are whole: --%s)",
				      prefix, options[longidx].name);
		longidx = -1;
		switch (opt) {
		case 'h':
			usage(stdout, argv[0]);
			return KSFT_PASS;
		case 'l':
		case OPT_LIST_MODULES:
			o->list = opt;
			break;
		case 'c':
			idx = case_index(optarg);
			if (idx < 0)
				return refuse(argv[0], "unknown case: %s", optarg);
			o->selected[idx] = true;
			o->any_selected = true;
			break;
		case 't':
			if (!parse_number(optarg, MIN_TIMEOUT_MS,
					  MAX_TIMEOUT_MS, &count)) {
				timeout_refused(argv[0], optarg);
				return refuse(argv[0], NULL);
			}
			suite.timeout_ms = count;
			break;
		case OPT_ALLOW_DEADLOCK:
			suite.allow_deadlock = true;
			break;
		case OPT_REPEAT:
			if (!parse_count(optarg, REPEAT_MAX, &count))
				return refuse(argv[0], "bad --repeat: %s (1 to %d)",
					      optarg, REPEAT_MAX);
			suite.repeat = count;
			break;
		case OPT_LATENCY:
			if (!counts_parse(optarg, LATENCY_JOBS_MAX, suite.latency,
					  &suite.nr_latency,
					  ARRAY_SIZE(suite.latency)))
				return refuse(argv[0], "bad --latency: %s (1 to %d, %zu at most)",
					      optarg, LATENCY_JOBS_MAX,
					      ARRAY_SIZE(suite.latency));
			break;
		case OPT_STORM:
			if (!counts_parse(optarg, STORM_LOADS_MAX, suite.storm,
					  &suite.nr_storm,
					  ARRAY_SIZE(suite.storm)))
				return refuse(argv[0], "bad --storm: %s (1 to %d, %zu at most)",
					      optarg, STORM_LOADS_MAX,
					      ARRAY_SIZE(suite.storm));
			break;
		case OPT_INTRUSIVE:
			if (strcmp(optarg, "yes") && strcmp(optarg, "no"))
				return refuse(argv[0], "bad --intrusive: %s (yes or no)",
					      optarg);
			suite.intrusive = !strcmp(optarg, "yes");
			break;
		case OPT_FACTS:
			if (facts_parse(&suite, optarg))
				return refuse(argv[0], "bad --facts: %s", optarg);
			break;
		case 'm':
			if (strlen(optarg) >= sizeof(suite.modules_dir))
				return refuse(argv[0], "--modules-dir too long");
			strcpy(suite.modules_dir, optarg);
			o->modules_dir_set = true;
			break;
		default:
			return refuse(argv[0], NULL);
		}
	}
	if (optind < argc)
		return refuse(argv[0], "unexpected argument: %s", argv[optind]);
	if (suite.repeat && suite.allow_deadlock)
		return refuse(argv[0], "--repeat runs the safe suite: not with --allow-deadlock");
	if (suite.repeat && (suite.nr_latency || suite.nr_storm))
		return refuse(argv[0], "--latency or --storm, and --repeat: one or the other");
	return -1;
}

int main(int argc, char *argv[])
{
	struct options o = { .list = 0 };
	bool left_as_found, measure;
	unsigned int plan = 0, k;
	size_t i;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	/* The module lists, from the table, whole before anything is run. */
	suite_test_modules(&suite);
	kernel_modules();
	/* Every option was checked: a list follows only valid arguments. */
	if (o.list == 'l')
		list_cases();
	if (o.list == OPT_LIST_MODULES)
		list_kernel_modules();
	if (o.list)
		return 0;
	if (!o.modules_dir_set)
		default_modules_dir(&suite, argv[0]);

	measure = suite.nr_latency || suite.nr_storm;
	setvbuf(stdout, NULL, _IOLBF, 0);
	diag_set_hook(ktap_diag);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!o.any_selected && !measure)
			o.selected[i] = true;
		plan += o.selected[i];
	}
	plan += measure;

	if (getenv(WHOLE_SUITE_SKIP_ENV)) {
		suite_check_prerequisites(&suite, SKIP_WHOLE_SUITE);
		if (suite.skip_all[0])
			return ktap_skip_all(suite.skip_all);
	}
	if (suite.repeat)
		plan = plan * suite.repeat + 1;		/* and repeat_drift */
	ktap_begin(plan);
	/* Which kernel this is, for a harness that meant to boot one. */
	kernel_identity(KERNEL_NOTES);
	suite_check_prerequisites(&suite, SKIP_EACH_CASE);
	if (!suite.skip_all[0]) {
		diag("modules: %s, timeout %d ms%s", suite.modules_dir,
		     suite.timeout_ms,
		     suite.allow_deadlock ? ", deadlocks allowed" : "");
		suite_intrusive(&suite);
		found_run_begin(&suite, kernel_modules());
		/* How a held load is seen: the run's, said once (case.c). */
		suite_view(&suite);
		suite_warm_up(&suite);
	}

	for (k = 1; k <= (suite.repeat ? suite.repeat : 1); k++) {
		repeat_begin(&suite, k);
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			if (o.selected[i])
				run_case(&suite, &cases[i], i, k);
		repeat_done(&suite, k);
	}
	if (measure)
		run_case(&suite, &latency_case, ARRAY_SIZE(cases), 1);
	ktap_bail_out_if_wedged();
	left_as_found = suite.skip_all[0] || found_run_check();
	repeat_end(&suite);
	if (!left_as_found)
		ksft_exit_fail();
	ktap_exit();
}
