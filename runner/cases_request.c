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

/*
 * The verdict on a request_module("@target") from an async job that
 * returned @result, made while the runner's load of @loaded (NULL: none)
 * ran, which returned @load_ret: both back with 0, @target live.
 */
static void request_verdict(struct case_ctx *ctx, const char *loaded,
			    int load_ret, const char *target, long result)
{
	char name[MA_MODULE_NAME_LEN];

	module_name_normalize(name, target, sizeof(name));
	log_module_state(name);
	if (loaded && load_ret)
		verdict(ctx, KTAP_FAIL, "loading %s failed: %s", loaded,
			strerror(-load_ret));
	else if (result)
		verdict(ctx, KTAP_FAIL,
			"request_module(\"%s\") returned %ld", target, result);
	else if (!module_is_live(name))
		verdict(ctx, KTAP_FAIL,
			"%s is not live after request_module() returned 0",
			name);
}

/* request_module() from async must return, and leave @target live. */
static void request_and_check_live(struct case_ctx *ctx, const char *target)
{
	long result;

	if (request_from_async(ctx, target, &result))
		request_verdict(ctx, NULL, 0, target, result);
}

/* How often a case reads the blocked tasks' stacks while it waits. */
#define MODPROBE_LOOK_MS	20

/*
 * Is the modprobe that request_module() runs seen blocked in
 * do_init_module()'s wait for async work (@syncing), or asleep in its load
 * waiting for the load of the same module under way (task_waits_for_a_load();
 * where no stack can be read: seen running at all)?
 */
static bool modprobe_seen(struct suite *s, bool syncing)
{
	static struct task_set blocked;
	const struct task_stack *t;
	unsigned int i;

	if (!syncing && s->view != TASK_VIEW_STACK)
		return tasks_named("modprobe") > 0;
	tasks_read_blocked(&blocked);
	for (i = 0; i < blocked.nr; i++) {
		t = &blocked.tasks[i];
		if (strcmp(t->comm, "modprobe"))
			continue;
		if (syncing ? task_waits_in(t->pid, SYNC_FUNCTIONS,
					    s->view) == 1 :
			      task_waits_for_a_load(t))
			return true;
	}
	return false;
}

/* How this run sees a held task (suite_view()); false if the verdict is set. */
static bool view_known(struct case_ctx *ctx)
{
	int ret = suite_view(ctx->suite);

	if (ret)
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot measure a baseline: %s", strerror(-ret));
	return !ret;
}

/*
 * Wait, bounded by @bound_ms, until @module's job is done (its request
 * back: *@done 1) or its modprobe is seen as modprobe_seen() says. With
 * no view of stacks, a modprobe that syncs is not seen: the bound is the
 * wait. True if the modprobe was seen.
 */
static bool modprobe_wait_seen(struct suite *s, const char *module,
			       bool syncing, int bound_ms, long *done)
{
	long long now, deadline = now_us() + bound_ms * 1000LL, next_look = 0;

	*done = 0;
	for (;;) {
		if (!knob_read_long(module, "done", done) && *done)
			return false;
		now = now_us();
		if (now >= next_look && (!syncing || s->view != TASK_VIEW_NONE)) {
			next_look = now + MODPROBE_LOOK_MS * 1000LL;
			if (modprobe_seen(s, syncing))
				return true;
		}
		if (now >= deadline)
			return false;
		sleep_ms(KNOB_POLL_STEP_MS);
	}
}

/*
 * @module's async job requests ma_nested, whose init queues a job held on
 * its gate. Wait, bounded, until that job is held and then until the load
 * is held (a modprobe seen blocked in async_synchronize_*; with no view of
 * stacks, the request not back after the suite's hold_ms) or the request
 * is back; then open the gate. A request back before the gate opened
 * returned with ma_nested's job undone: nested_done_at_return() says so.
 * False if the verdict is set.
 */
static bool nested_hold_then_open(struct case_ctx *ctx, const char *module)
{
	struct suite *s = ctx->suite;
	long started = 0, done = 0;
	bool held = false;
	int ret;

	if (!view_known(ctx))
		return false;
	ret = knob_wait_long("ma_nested", "started", 1, s->timeout_ms,
			     &started);
	if (!ret)
		held = modprobe_wait_seen(s, module, true,
					  s->view == TASK_VIEW_NONE ?
					  s->hold_ms : s->timeout_ms, &done) ||
		       (s->view == TASK_VIEW_NONE && !done);
	diag("ma_nested's job %s; its load %s when its gate opens",
	     started ? "held on its gate" : "not seen started",
	     done ? "is back" : held ? "is held" : "neither back nor seen held");
	gate_open("ma_nested");
	return true;
}

/*
 * After the request from @module's job returned 0: ma_nested's job must
 * have been done the moment it returned (the job's "target_done", read in
 * the kernel right after request_module()), and released by its gate, not
 * by its safety timeout. The job that requested it was queued before
 * ma_nested's load and pending all along: older async work the load must
 * not take for a sign that its own is done.
 */
static void nested_done_at_return(struct case_ctx *ctx, const char *module)
{
	long at_return = -1, timed_out = -1;

	knob_read_long(module, "target_done", &at_return);
	knob_read_long("ma_nested", "timed_out", &timed_out);
	diag("ma_nested's job at request_module()'s return: done=%ld; timed_out=%ld",
	     at_return, timed_out);
	if (at_return != 1)
		verdict(ctx, KTAP_FAIL,
			"request_module(\"ma_nested\") returned before ma_nested's own async job was done (done=%ld), %s's older job pending",
			at_return, module);
	else if (timed_out)
		verdict(ctx, KTAP_FAIL,
			"ma_nested's job was released by its safety timeout, not by the gate");
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

/*
 * ma_request's job requests ma_nested, whose init queues a job held on its
 * gate. Where a load waits for all async work (always-sync, and the 3.8
 * flag: the init used async) ma_nested's load waits for the requesting
 * job: a deadlock. Elsewhere request_module() must return only once
 * ma_nested's own job is done, the requesting job (older work) pending.
 */
void case_nested_async_load(struct case_ctx *ctx)
{
	long long begin = now_us();
	long result;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_nested"))
		return;
	if (!request_start(ctx, "ma_request", "ma_nested", false) ||
	    !nested_hold_then_open(ctx, "ma_request") ||
	    !request_wait(ctx, "ma_request", "ma_nested", begin, &result))
		return;
	request_verdict(ctx, NULL, 0, "ma_nested", result);
	if (!verdict_given(ctx))
		nested_done_at_return(ctx, "ma_request");
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
 * and sleeps in it (interruptibly: task_waits_for_a_load()); the gate opens
 * once it is seen there, and the runner's load of ma_hold then waits for
 * the job: a TIMEOUT on stock 5.10, 6.1 and 7.2 with deadlocks allowed, its
 * wait-for cycle read (lib/waitfor.c). A modprobe that came later would
 * find ma_hold live and return: the gate must not open before. With the
 * 3.8 flag the init used no async: the load does not wait.
 */
void case_request_module_being_loaded_from_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long long begin = now_us();
	struct test_load t;
	long result, done = 0;
	bool seen;
	int ret;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_hold") ||
	    !view_known(ctx))
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
	/*
	 * The request under way, its modprobe seen waiting for the load (or
	 * just running, where no stack can be read), or the request back.
	 */
	seen = modprobe_wait_seen(s, "ma_request", false, s->timeout_ms, &done);
	diag("the request is %s while ma_hold's init holds",
	     done ? "back" : !seen ? "not seen under way" :
	     s->view == TASK_VIEW_STACK ?
	     "under way, its modprobe waiting for the load" : "under way");
	gate_open("ma_hold");
	if (!request_wait(ctx, "ma_request", "ma_hold", begin, &result))
		return;
	if (!test_load_back(ctx, &t, "its gate opening"))
		return;
	request_verdict(ctx, "ma_hold", module_load_result(&t.load), "ma_hold",
			result);
}

/*
 * A module whose init queues an async job that loads a module: the runner
 * loads ma_init_request, whose init's job requests ma_nested (whose own
 * init uses async). The outer load waits for the job wherever a load waits
 * for its init's async work; the job waits for ma_nested's load, which must
 * not wait for the job: it was queued before that load began, inside the
 * outer one, and must return only once its own job (held on its gate) is
 * done. Deadlocks where a load whose init uses async waits for work queued
 * before it (always-sync, and the 3.8 flag).
 */
void case_init_async_job_loads_module(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long long begin = now_us();
	struct test_load t;
	long result;
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
	if (!nested_hold_then_open(ctx, "ma_init_request") ||
	    !request_wait(ctx, "ma_init_request", "ma_nested", begin, &result) ||
	    !test_load_back(ctx, &t, "its job's end"))
		return;
	ret = module_load_result(&t.load);
	diag("the load of ma_init_request returned %d after %.1f ms", ret,
	     ms(child_elapsed_us(&t.load.child)));
	request_verdict(ctx, "ma_init_request", ret, "ma_nested", result);
	if (!verdict_given(ctx))
		nested_done_at_return(ctx, "ma_init_request");
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
