// SPDX-License-Identifier: GPL-2.0
/*
 * The cases of request_module() called by an async job: the 2013 deadlock
 * where do_init_module() syncs all async work, its async_probe escape, its
 * nested form, and the kernel's warning about it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

/* A module name no modprobe will find (warn_on_sync_request_from_async). */
#define ABSENT_MODULE		"ma_absent_module"

/*
 * Load @module (ma_request or its twin) with @target, start its job: it
 * requests @target at once, or, @held, once its gate opens.
 */
static bool request_start(struct case_ctx *ctx, const char *module,
			  const char *target, bool held)
{
	char params[128];
	int ret;

	snprintf(params, sizeof(params), "target=%s%s", target,
		 held ? "" : " open=1");
	ret = test_module_load(ctx->suite, module, params);
	if (ret) {
		fail_load(ctx, module, ret);
		return false;
	}
	ret = job_start(module);
	if (ret)
		verdict(ctx, KTAP_FAIL,
			"cannot start %s's job: %s", module, strerror(-ret));
	return !ret;
}

/*
 * Wait, bounded, until @module's async job, in request_module("@target")
 * since @begin, has returned; a deadlock is reported as a TIMEOUT with the
 * stuck tasks' stacks. Returns the job's result in *@result; false if the
 * verdict is set.
 */
static bool request_wait(struct case_ctx *ctx, const char *module,
			 const char *target, long long begin, long *result)
{
	char what[128];
	long done = 0, request_us = -1;
	int ret;

	ret = job_wait_done_or_cycle(ctx, module, &done);
	if (ret) {
		log_knobs(module);
		log_module_state(target);
		modules_dump_loading();
		snprintf(what, sizeof(what),
			 "request_module(\"%s\") from an async job", target);
		verdict_stuck(ctx, ret, what);
		return false;
	}
	*result = -1;
	knob_read_long(module, "result", result);
	diag("request_module(\"%s\") from %s's async job returned %ld after %.1f ms",
	     target, module, *result, ms(now_us() - begin));
	/* The kernel's part: ma_request and its twin time the call itself. */
	if (!knob_read_long(module, "request_us", &request_us) && request_us >= 0)
		diag("the call itself took %.1f ms: the kernel's, running modprobe",
		     ms(request_us));
	return true;
}

/*
 * Make ma_request's async job call request_module("@target") synchronously
 * and wait, bounded, for it to return. Where do_init_module() waits for all
 * async work, the modprobe it runs waits for the job that waits for the
 * modprobe: a deadlock, reported as a TIMEOUT with the stuck tasks' stacks.
 * Returns the job's result in *@result; false if the verdict is set.
 */
static bool request_from_async(struct case_ctx *ctx, const char *target,
			       long *result)
{
	long long begin = now_us();

	return request_start(ctx, "ma_request", target, false) &&
	       request_wait(ctx, "ma_request", target, begin, result);
}

/* request_module() from async must return, and leave @target live. */
static void request_and_check_live(struct case_ctx *ctx, const char *target)
{
	char name[MA_MODULE_NAME_LEN];
	long result;

	if (!request_from_async(ctx, target, &result))
		return;
	module_name_normalize(name, target, sizeof(name));
	log_module_state(name);
	if (result)
		verdict(ctx, KTAP_FAIL,
			"request_module(\"%s\") returned %ld", target, result);
	else if (!module_is_live(name))
		verdict(ctx, KTAP_FAIL,
			"%s is not live after request_module() returned 0",
			name);
}

void case_request_module_from_async(struct case_ctx *ctx)
{
	const char *target = ctx->c->kernel_modules[0];

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, target))
		return;
	request_and_check_live(ctx, target);
}

/*
 * async_probe for the target's load: the module loader's default,
 * /sys/module/module/parameters/async_probe, set to 1 (module_param() since
 * 6.0, kernel/module/main.c:2455 in 6.1); where that knob is missing (5.10),
 * the target's own option, which unknown_module_param_cb() takes in every
 * generation (kernel/module.c:3929 in 5.10). The modprobe the kernel runs
 * takes no arguments from us, so the option goes in a file of the runtime
 * directory of modprobe's configuration (kmod's modprobe.d(5)). Both are
 * undone by async_probe_restore(). (MODPROBE_RUN_DIR and ASYNC_PROBE_CONF
 * are in runner.h: found.c watches them.)
 */

/*
 * module.async_probe as found, while a case or the policy probe
 * (probe.c) has changed it ("" otherwise).
 */
char saved_async_probe[16];
/* ASYNC_PROBE_CONF written, MODPROBE_RUN_DIR made, while a case runs. */
static bool conf_written, conf_dir_made;

void async_probe_restore(void)
{
	if (saved_async_probe[0])
		knob_write("module", "async_probe", saved_async_probe);
	if (conf_written)
		unlink(ASYNC_PROBE_CONF);
	if (conf_dir_made)
		rmdir(MODPROBE_RUN_DIR);
}

/* "options @name async_probe=1" in ASYNC_PROBE_CONF; 0 or -errno. */
static int async_probe_conf_write(const char *name)
{
	FILE *f;
	int ret = 0;

	if (!mkdir(MODPROBE_RUN_DIR, 0755))
		conf_dir_made = true;
	else if (errno != EEXIST)
		return -errno;
	conf_written = true;
	f = fopen(ASYNC_PROBE_CONF, "we");
	if (!f)
		return -errno;
	if (fprintf(f, "options %s async_probe=1\n", name) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* Undo async_probe_set(), saying so; false if something stayed. */
static bool async_probe_unset(void)
{
	char value[16] = "";
	bool undone = true, gone;

	async_probe_restore();
	if (saved_async_probe[0]) {
		knob_read("module", "async_probe", value, sizeof(value));
		undone = !strcmp(value, saved_async_probe);
		diag("module.async_probe restored: %s", value);
		saved_async_probe[0] = '\0';
	}
	if (conf_written) {
		gone = access(ASYNC_PROBE_CONF, F_OK) != 0;
		undone = undone && gone;
		diag("%s %s", ASYNC_PROBE_CONF, gone ? "removed" : "not removed");
		conf_written = false;
		conf_dir_made = false;
	}
	return undone;
}

/* Give @target async_probe, saying how; 0 or -errno (undone). */
static int async_probe_set(const char *target)
{
	char saved[sizeof(saved_async_probe)], name[MA_MODULE_NAME_LEN];
	int ret;

	if (knob_read("module", "async_probe", saved, sizeof(saved))) {
		module_name_normalize(name, target, sizeof(name));
		ret = async_probe_conf_write(name);
		if (!ret)
			diag("no module.async_probe knob: %s says \"options %s async_probe=1\"",
			     ASYNC_PROBE_CONF, name);
	} else {
		strcpy(saved_async_probe, saved);
		ret = knob_write("module", "async_probe", "1");
		if (!ret)
			diag("module.async_probe was %s, is 1 for this case",
			     saved);
	}
	if (ret)
		async_probe_unset();
	return ret;
}

void case_request_module_from_async_async_probe(struct case_ctx *ctx)
{
	const char * const *targets = ctx->c->kernel_modules;
	const char *target = NULL;
	char reason[128];
	size_t i;
	int ret;

	if (skip_if_warn_panics(ctx))
		return;
	/* The first of the row's targets that can be loaded here. */
	for (i = 0; targets[i] && !target; i++) {
		if (!why_not_loadable(ctx, targets[i], reason,
				      sizeof(reason)))
			target = targets[i];
	}
	if (!target) {
		verdict(ctx, KTAP_SKIP,
			"none of kyber-iosched, bfq, null_blk can be loaded (%s)",
			reason);
		return;
	}

	ret = async_probe_set(target);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot give %s async_probe: %s",
			target, strerror(-ret));
		return;
	}

	request_and_check_live(ctx, target);

	if (!async_probe_unset() && !verdict_given(ctx))
		verdict(ctx, KTAP_FAIL, "async_probe not undone");
}

void case_nested_async_load(struct case_ctx *ctx)
{
	long done = 0;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_nested"))
		return;
	request_and_check_live(ctx, "ma_nested");
	if (verdict_given(ctx))
		return;
	if (knob_wait_long("ma_nested", "done", 1, ctx->suite->timeout_ms,
			   &done))
		verdict(ctx, KTAP_FAIL,
			"ma_nested's own async job is not done (done=%ld)",
			done);
}

/*
 * The same module requested from two async jobs at once: ma_request's and
 * ma_request_twin's jobs, both queued and held on their gates before
 * either requests ma_hold, are let go together; once ma_hold's init holds
 * on its gate and the other request is seen (a second modprobe running, or
 * that request back) the gate opens. The second request waits for the
 * first load (add_unformed_module() in 6.1, idempotent() in 7.2) or finds
 * the module there, and never runs an init of its own; the load's
 * do_init_module() must wait for neither job: both were queued before it
 * began. Where it waits for all async work: the 2013 deadlock, with two
 * jobs in it. (A job queued while the load runs that requests the same
 * module: request_module_being_loaded_from_async.)
 */
void case_request_module_twice_from_async(struct case_ctx *ctx)
{
	static const char * const jobs[] = { "ma_request", "ma_request_twin" };
	struct suite *s = ctx->suite;
	long long begin = now_us(), deadline;
	long result[ARRAY_SIZE(jobs)], done[ARRAY_SIZE(jobs)] = { 0 };
	size_t i;
	int ret = 0;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_hold"))
		return;
	/*
	 * Where a load waits for unrelated async work, loading the second
	 * job's module waits for the first job, held on its gate: the two
	 * requests cannot both be set up, deadlocks allowed or not (the
	 * request_module_from_async_* cases show that kernel's deadlock).
	 */
	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (s->facts[FACT_UNRELATED] != FACT_NO) {
		verdict(ctx, KTAP_SKIP,
			"a load here waits for unrelated async work: the second job's module would wait for the first job");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(jobs); i++)
		if (!request_start(ctx, jobs[i], "ma_hold", true))
			return;
	for (i = 0; i < ARRAY_SIZE(jobs) && !ret; i++)
		ret = knob_wait_long(jobs[i], "started", 1, s->timeout_ms, NULL);
	for (i = 0; i < ARRAY_SIZE(jobs); i++)
		gate_open(jobs[i]);
	if (!ret)
		ret = knob_wait_long("ma_hold", "started", 1, s->timeout_ms, NULL);
	if (ret) {
		log_knobs(jobs[0]);
		log_knobs(jobs[1]);
		verdict(ctx, KTAP_FAIL,
			"the jobs and ma_hold's init did not start within %d ms",
			s->timeout_ms);
		return;
	}
	deadline = now_us() + s->timeout_ms * 1000LL;
	while (tasks_named("modprobe") < 2) {
		knob_read_long(jobs[0], "done", &done[0]);
		knob_read_long(jobs[1], "done", &done[1]);
		if (done[0] || done[1])
			break;
		if (now_us() >= deadline) {
			diag("no second modprobe seen within %d ms", s->timeout_ms);
			break;
		}
		sleep_ms(KNOB_POLL_STEP_MS);
	}
	diag("the other request is %s while ma_hold's init holds",
	     done[0] || done[1] ? "back" : "under way");
	gate_open("ma_hold");

	for (i = 0; i < ARRAY_SIZE(jobs); i++)
		if (!request_wait(ctx, jobs[i], "ma_hold", begin, &result[i]))
			return;
	log_module_state("ma_hold");
	for (i = 0; i < ARRAY_SIZE(jobs); i++)
		if (result[i])
			verdict(ctx, KTAP_FAIL,
				"%s's request_module(\"ma_hold\") returned %ld",
				jobs[i], result[i]);
	if (!verdict_given(ctx) && !module_is_live("ma_hold"))
		verdict(ctx, KTAP_FAIL,
			"ma_hold is not live after both requests returned 0");
}

/*
 * An async job queued while a module's init runs requests that module:
 * ma_hold's init holds on its gate while ma_request's job, queued by the
 * runner meanwhile, requests ma_hold; then the gate opens. The request
 * must return 0 and ma_hold be live. A finit_module() of ma_hold made
 * meanwhile waits for the load under way (add_unformed_module() in 6.1,
 * idempotent() in 7.2); where that load waits for the async work queued
 * while its init ran (always-sync: all of it; own-work: its window, whoever
 * queued it) it waits for the job: a deadlock, so the case is unsafe
 * there. The modprobe that request_module() runs makes that finit_module()
 * and sleeps in it (interruptibly) while the runner's load of ma_hold waits
 * for the job: a TIMEOUT on stock 5.10, 6.1 and 7.2 with deadlocks allowed.
 * With the 3.8 flag the init used no async: the load does not wait.
 */
void case_request_module_being_loaded_from_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long long begin = now_us(), deadline;
	struct test_load t;
	long result, done = 0;
	int ret;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_hold"))
		return;
	ret = test_load_start(s, &t, "ma_hold", NULL);
	if (!ret)
		ret = knob_wait_long("ma_hold", "started", 1, s->timeout_ms, NULL);
	if (ret) {
		log_knobs("ma_hold");
		verdict(ctx, KTAP_FAIL, "cannot hold ma_hold's init: %s",
			strerror(-ret));
		return;
	}
	if (!request_start(ctx, "ma_request", "ma_hold", false))
		return;
	/* The request under way: the modprobe it runs, or its return. */
	deadline = now_us() + s->timeout_ms * 1000LL;
	while (!tasks_named("modprobe") &&
	       (knob_read_long("ma_request", "done", &done) || !done)) {
		if (now_us() >= deadline) {
			diag("no modprobe seen within %d ms", s->timeout_ms);
			break;
		}
		sleep_ms(KNOB_POLL_STEP_MS);
	}
	diag("the request is %s while ma_hold's init holds",
	     done ? "back" : "under way");
	gate_open("ma_hold");
	if (!request_wait(ctx, "ma_request", "ma_hold", begin, &result))
		return;
	if (!test_load_back(ctx, &t, "its gate opening"))
		return;
	ret = module_load_result(&t.load);
	log_module_state("ma_hold");
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_hold failed: %s",
			strerror(-ret));
	else if (result)
		verdict(ctx, KTAP_FAIL,
			"request_module(\"ma_hold\") returned %ld", result);
	else if (!module_is_live("ma_hold"))
		verdict(ctx, KTAP_FAIL,
			"ma_hold is not live after request_module() returned 0");
}

/*
 * A module whose init queues an async job that loads a module: the runner
 * loads ma_init_request, whose init's job requests ma_nested (whose own
 * init uses async). The outer load waits for the job wherever a load waits
 * for its init's async work; the job waits for ma_nested's load, which must
 * not wait for the job: it was queued before that load began, inside the
 * outer one. Deadlocks where a load whose init uses async waits for work
 * queued before it (always-sync, and the 3.8 flag).
 */
void case_init_async_job_loads_module(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long long begin = now_us();
	struct test_load t;
	long result, done = 0;
	int ret;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_nested"))
		return;
	ret = test_load_start(s, &t, "ma_init_request",
			      "target=ma_nested open=1");
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start loading ma_init_request: %s",
			strerror(-ret));
		return;
	}
	if (!request_wait(ctx, "ma_init_request", "ma_nested", begin, &result))
		return;
	if (!test_load_back(ctx, &t, "its job's end"))
		return;
	ret = module_load_result(&t.load);
	diag("the load of ma_init_request returned %d after %.1f ms", ret,
	     ms(child_elapsed_us(&t.load.child)));
	log_module_state("ma_nested");
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_init_request failed: %s",
			strerror(-ret));
	else if (result)
		verdict(ctx, KTAP_FAIL,
			"request_module(\"ma_nested\") returned %ld", result);
	else if (!module_is_live("ma_nested"))
		verdict(ctx, KTAP_FAIL,
			"ma_nested is not live after request_module() returned 0");
	else if (knob_wait_long("ma_nested", "done", 1, s->timeout_ms, &done))
		verdict(ctx, KTAP_FAIL,
			"ma_nested's own async job is not done (done=%ld)", done);
}

/*
 * A synchronous request_module() from an async job must trigger kmod.c's
 * WARN_ON_ONCE(wait && current_is_async()). Safe everywhere: the module
 * requested does not exist, so modprobe fails fast and no do_init_module()
 * runs. The warning fires once per boot: an earlier one counts, found in
 * what the kernel log still holds.
 */
void case_warn_on_sync_request_from_async(struct case_ctx *ctx)
{
	static struct kmsg_scan earlier;
	bool earlier_ok, fired;
	long result;

	if (skip_if_warn_panics(ctx))
		return;
	if (!ctx->kmsg_ok || kmsg_open(&earlier, true)) {
		verdict(ctx, KTAP_SKIP,
			"cannot read the kernel log (/dev/kmsg)");
		return;
	}
	if (module_available(ABSENT_MODULE)) {
		verdict(ctx, KTAP_SKIP,
			"%s exists: cannot request a missing module",
			ABSENT_MODULE);
		kmsg_close(&earlier);
		return;
	}
	kmsg_reset(&earlier, "__request_module");
	earlier_ok = kmsg_scan(&earlier) >= 0;
	kmsg_close(&earlier);
	kmsg_reset(&ctx->kmsg, "__request_module");

	if (!request_from_async(ctx, ABSENT_MODULE, &result))
		return;
	kmsg_scan(&ctx->kmsg);
	fired = ctx->kmsg.warning_matches;

	if (fired) {
		kmsg_report(&ctx->kmsg, "kernel: ");
	} else if (earlier_ok && earlier.warning_matches) {
		diag("no new warning: WARN_ON_ONCE already fired earlier in this boot:");
		kmsg_report(&earlier, "kernel: ");
	} else if (!earlier_ok || earlier.nr_lost) {
		verdict(ctx, KTAP_SKIP,
			"no warning, and the log lost records: an earlier one may be gone");
	} else {
		verdict(ctx, KTAP_FAIL,
			"no WARNING from __request_module() in the kernel log");
	}
}
