// SPDX-License-Identifier: GPL-2.0
/*
 * The cases of do_init_module()'s wait: for the async work a module's init
 * started (directly, or through a worker), and for async work it did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* Load @module, its job to be held on its gate: false if it cannot start. */
static bool init_load_start(struct case_ctx *ctx, const char *module,
			    struct module_load *load, char *path,
			    size_t path_len, char *params, size_t params_len)
{
	struct suite *s = ctx->suite;
	int ret;

	ret = suite_view(s);
	if (ret == -ETIMEDOUT) {
		verdict(ctx, KTAP_WEDGED,
			"a load or unload of ma_plain did not return within %d ms",
			s->timeout_ms);
		return false;
	}
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot measure a baseline: %s", strerror(-ret));
		return false;
	}
	snprintf(params, params_len, "gate_ms=%d", gate_ms(s));
	load->path = path;
	load->params = params;
	ret = module_path(s, module, path, path_len);
	if (!ret)
		ret = module_load_start(load);
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"cannot start loading %s: %s", module, strerror(-ret));
		return false;
	}
	return true;
}

/* The load of @module came back before its job's gate was opened. */
static void init_returned_early(struct case_ctx *ctx, enum fact_id id,
				const char *module, const char *older,
				struct module_load *load, long started)
{
	struct suite *s = ctx->suite;
	int ret;

	ret = module_load_result(load);
	gate_open(module);
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"loading %s failed: %s", module, strerror(-ret));
		return;
	}
	diag("load returned after %.1f ms; the job had %s; done=%ld at return",
	     ms(child_elapsed_us(&load->child)),
	     started ? "started and was held on its gate" : "not started yet",
	     load->child.report.has_value ? load->child.report.value : -1L);
	if (older) {
		fact_undone_seen(s, true);
		verdict(ctx, KTAP_FAIL,
			"the load returned while its async job was still running, %s's older one held",
			older);
		return;
	}
	fact_set(s, id, FACT_NO);
	verdict(ctx, KTAP_FAIL,
		"the load returned while its async job was still running");
}

/*
 * The load of @module held since @started_at: open its job's gate (and
 * then @older's), and judge the load by its return.
 */
static void init_release(struct case_ctx *ctx, enum fact_id id,
			 const char *module, const char *older,
			 struct module_load *load, long long started_at)
{
	struct suite *s = ctx->suite;
	long long opened_at = now_us();
	enum child_status status;
	long timed_out = -1;
	int ret;

	gate_open(module);
	if (older) {
		/* Its own job done, the load may still wait for @older's. */
		if (job_wait_done(s, module))
			log_knobs(module);
		status = module_load_wait(load, 0);
		diag("its job done, the load %s while %s's older job is held",
		     status == CHILD_RUNNING ? "is still running" : "returned",
		     older);
		gate_open(older);
	}
	status = module_load_wait(load, s->timeout_ms);
	if (status == CHILD_RUNNING) {
		child_describe(&load->child, "load");
		log_knobs(module);
		verdict(ctx, KTAP_WEDGED,
			"the load did not return within %d ms of the gate opening",
			s->timeout_ms);
		return;
	}
	ret = module_load_result(load);
	knob_read_long(module, "timed_out", &timed_out);
	diag("load held %.1f ms with its job, back %.1f ms after the gate opened",
	     ms(opened_at - started_at),
	     ms(load->child.report.end_us - opened_at));
	diag("at its return: done=%ld, timed_out=%ld",
	     load->child.report.has_value ? load->child.report.value : -1L,
	     timed_out);
	if (ret) {
		verdict(ctx, KTAP_FAIL,
			"loading %s failed: %s", module, strerror(-ret));
	} else if (!load->child.report.has_value ||
		   load->child.report.value != 1) {
		if (older)
			fact_undone_seen(s, true);
		verdict(ctx, KTAP_FAIL,
			"the load returned before its async job was done");
	} else if (timed_out) {
		verdict(ctx, KTAP_FAIL,
			"the job was released by its safety timeout, not by the gate");
	} else if (older) {
		fact_undone_seen(s, false);
	} else {
		fact_set(s, id, FACT_YES);
	}
}

/*
 * Load the module of fact @id (FACT_OWN: ma_async_init, FACT_WORKER:
 * ma_worker_async), whose init leads to an async job held on a gate;
 * @older, if not NULL, is a module whose job, queued before the load, is
 * held on its own gate. The load must be seen held while its job is
 * (lib/tasks.h: blocked in async_synchronize_*), and the job must be done
 * (its "done" knob, read by the loading child the moment finit_module()
 * returned) when it returns after the gates opened: its own first, then,
 * once its job is done, @older's (a kernel may wait for that one too).
 * What was seen is the fact (probe.c): alone, own or worker; beside
 * @older, a return with the job undone is fact undone.
 */
static void init_wait_beside(struct case_ctx *ctx, enum fact_id id,
			     const char *older)
{
	const char *module = id == FACT_OWN ? "ma_async_init" :
					      "ma_worker_async";
	struct module_load load = { .knob_after = "done" };
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	enum child_status status = CHILD_RUNNING;
	enum load_hold hold = LOAD_RUNNING;
	long long deadline, started_at;
	long started = 0;

	if (!init_load_start(ctx, module, &load, path, sizeof(path), params,
			     sizeof(params)))
		return;

	/* Until the job is held on its gate, or the load is back. */
	deadline = now_us() + s->timeout_ms * 1000LL;
	for (;;) {
		if (!knob_read_long(module, "started", &started) && started)
			break;
		status = module_load_wait(&load, KNOB_POLL_STEP_MS);
		if (status != CHILD_RUNNING || now_us() >= deadline)
			break;
	}
	started_at = now_us();

	if (status == CHILD_RUNNING && !started) {
		/* A load that does not return once its gates open is stuck. */
		gate_open(module);
		if (older)
			gate_open(older);
		log_knobs(module);
		if (module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
			child_describe(&load.child, "load");
			verdict(ctx, KTAP_WEDGED,
				"the job did not start within %d ms, nor did the load return",
				s->timeout_ms);
		} else {
			verdict(ctx, KTAP_TIMEOUT,
				"the async job did not start within %d ms",
				s->timeout_ms);
		}
		return;
	}
	if (status == CHILD_RUNNING)
		hold = load_wait_held(s, &load, s->timeout_ms);
	if (status != CHILD_RUNNING || hold == LOAD_RETURNED) {
		init_returned_early(ctx, id, module, older, &load, started);
		return;
	}
	if (hold == LOAD_RUNNING)
		diag("the load neither returned nor was seen held within %d ms",
		     s->timeout_ms);
	init_release(ctx, id, module, older, &load, started_at);
}

void init_wait(struct case_ctx *ctx, enum fact_id id)
{
	init_wait_beside(ctx, id, NULL);
}

/*
 * ma_async_init's load alone, then beside ma_gate's job, queued before the
 * load and held: a kernel must not take that older job, pending ahead of
 * the load's own, for the sign that the load's own work is done.
 */
void case_async_init_completes(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	int ret;

	init_wait(ctx, FACT_OWN);
	if (verdict_given(ctx))
		return;
	ret = module_unload("ma_async_init", s->timeout_ms);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot unload ma_async_init: %s", strerror(-ret));
		return;
	}
	if (!gate_job_held(ctx))
		return;
	diag("again, beside ma_gate's job, queued first and held:");
	init_wait_beside(ctx, FACT_OWN, "ma_gate");
}

void case_async_worker_init_completes(struct case_ctx *ctx)
{
	init_wait(ctx, FACT_WORKER);
}

/*
 * Load ma_plain beside a held job, with the async_probe option for fact
 * FACT_ASYNC_PROBE: it must not wait for the job. A fact the policy probe
 * measured already is taken as it is (its evidence is above).
 */
static void plain_load_skips(struct case_ctx *ctx, enum fact_id id)
{
	const char *params = id == FACT_ASYNC_PROBE ? "async_probe=1" : NULL;
	enum fact *f = &ctx->suite->facts[id];
	struct held_load h;
	bool held;
	int ret;

	if (*f == FACT_YES || *f == FACT_NO) {
		held = (*f == FACT_YES) == (id == FACT_UNRELATED);
		diag("as the policy probe measured: ma_plain%s%s was %sheld",
		     params ? " with " : "", params ? params : "",
		     held ? "" : "not ");
		if (held)
			verdict(ctx, KTAP_FAIL,
				"the load waited for an unrelated async job");
		return;
	}
	ret = load_beside_held_job(ctx->suite, "ma_plain", params, &h);
	if (h.stuck) {
		verdict(ctx, KTAP_WEDGED,
			"a load did not return within %d ms%s",
			ctx->suite->timeout_ms,
			ret ? "" : " of the unrelated job's gate opening");
	} else if (ret) {
		verdict(ctx, KTAP_FAIL,
			"could not hold an unrelated job and load beside it");
	} else if (h.result) {
		verdict(ctx, KTAP_FAIL,
			"loading ma_plain failed: %s", strerror(-h.result));
	} else if (h.held) {
		verdict(ctx, KTAP_FAIL,
			"the load waited for an unrelated async job (%.1f ms after its gate)",
			ms(h.after_open_us));
	}
}

void case_plain_load_skips_unrelated_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (s->facts[FACT_UNRELATED] == FACT_YES) {
		verdict(ctx, KTAP_SKIP,
			"this kernel waits for unrelated async work on module init");
		return;
	}
	plain_load_skips(ctx, FACT_UNRELATED);
}

void case_async_probe_skips_unrelated_async(struct case_ctx *ctx)
{
	plain_load_skips(ctx, FACT_ASYNC_PROBE);
}

/*
 * Async work an unrelated task queues while a load's init runs: ma_hold's
 * init holds on its gate while the runner queues ma_gate's job and holds
 * it; then ma_hold's gate opens. Is the load, its init back, held by that
 * job? The named policy says (policy_awaits_during_init()): yes where all
 * async work is waited for, and where the work queued while the init ran is
 * (own-work: the job is inside the init's window, whoever queued it); no
 * with the 3.8 flag (the init used no async) or no sync at all. Either way
 * the load must return once the job is done.
 */
void case_unrelated_async_during_init(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct test_load t;
	enum load_hold hold;
	enum fact expect;
	int ret;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	expect = policy_awaits_during_init(s);
	if (expect == FACT_UNKNOWN) {
		verdict(ctx, KTAP_SKIP,
			"no named policy says whether a load waits for it");
		return;
	}
	ret = test_module_load(s, "ma_gate", NULL);
	if (ret) {
		fail_load(ctx, "ma_gate", ret);
		return;
	}
	ret = test_load_start(s, &t, "ma_hold", NULL);
	if (!ret)
		ret = knob_wait_long("ma_hold", "started", 1, s->timeout_ms, NULL);
	if (!ret)
		ret = job_start("ma_gate");
	if (!ret)
		ret = knob_wait_long("ma_gate", "started", 1, s->timeout_ms, NULL);
	if (ret) {
		log_knobs("ma_hold");
		log_knobs("ma_gate");
		verdict(ctx, KTAP_FAIL,
			"cannot hold ma_hold's init with ma_gate's job queued: %s",
			strerror(-ret));
		return;
	}
	gate_open("ma_hold");
	hold = load_wait_held(s, &t.load, s->timeout_ms);
	diag("ma_hold's init back, the load %s while ma_gate's job is held",
	     hold == LOAD_HELD ? "is held" : hold == LOAD_RETURNED ?
	     "returned" : "neither returned nor was seen held");
	gate_open("ma_gate");
	if (!test_load_back(ctx, &t, "ma_gate's gate opening"))
		return;
	ret = module_load_result(&t.load);
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading ma_hold failed: %s",
			strerror(-ret));
	else if ((hold != LOAD_RETURNED) != (expect == FACT_YES))
		verdict(ctx, KTAP_FAIL,
			"the load %s the unrelated job, unlike its policy",
			expect == FACT_YES ? "did not wait for" : "waited for");
}

/*
 * Wait, bounded, until the chained job runs (its module's "chained": B,
 * queued once "open_first" let the first job go) and the load, woken by
 * the first job's end, is seen held again in the sync; or until the load
 * returns. LOAD_HELD, LOAD_RETURNED, or LOAD_RUNNING at the bound. Where
 * the kernel shows no sleeps or stacks, a load still running HELD_AGAIN_MS
 * after B began is held (a wake-up's time, under TCG too).
 */
#define HELD_AGAIN_MS		50

static enum load_hold chain_held_again(struct suite *s, const char *module,
				       struct module_load *load, long before)
{
	long long deadline = now_us() + s->timeout_ms * 1000LL;
	pid_t pid = load->child.pid;
	long chained = 0, sleeps;
	bool view = s->view != TASK_VIEW_NONE && before >= 0;

	for (;;) {
		if (module_load_wait(load, KNOB_POLL_STEP_MS) != CHILD_RUNNING)
			return LOAD_RETURNED;
		if (knob_read_long(module, "chained", &chained) || !chained) {
			if (now_us() >= deadline)
				return LOAD_RUNNING;
			continue;
		}
		if (!view)
			return module_load_wait(load, HELD_AGAIN_MS) ==
			       CHILD_RUNNING ? LOAD_HELD : LOAD_RETURNED;
		if (!task_sleeps(pid, &sleeps) && sleeps > before &&
		    task_waits_in(pid, SYNC_FUNCTIONS, s->view) == 1)
			return LOAD_HELD;
		if (now_us() >= deadline)
			return LOAD_RUNNING;
	}
}

/* Wait, bounded, for @module's load, its gates open: false if wedged. */
static bool chain_load_back(struct case_ctx *ctx, const char *module,
			    struct module_load *load)
{
	char what[MA_MODULE_NAME_LEN + 16];

	if (module_load_wait(load, ctx->suite->timeout_ms) != CHILD_RUNNING)
		return true;
	snprintf(what, sizeof(what), "load of %s", module);
	child_describe(&load->child, what);
	verdict(ctx, KTAP_WEDGED,
		"the load of %s did not return within %d ms of its gates opening",
		module, ctx->suite->timeout_ms);
	return false;
}

/*
 * @module's init leads to job A, held on its first gate; A, let go, leads
 * to job B, held on the gate (@how says how: queued by A itself, ...).
 * The load must be held while A is, still held while B is, and B done the
 * moment it returns: the work an async call of the init leads to is the
 * init's too (a SCSI scan's disk probes). Safe on every kernel.
 */
static void chain_completes(struct case_ctx *ctx, const char *module,
			    const char *how)
{
	struct module_load load = { .knob_after = "done" };
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	enum load_hold hold;
	long before = -1, done = -1;
	int ret;

	ret = suite_view(s);
	if (ret) {
		verdict(ctx, ret == -ETIMEDOUT ? KTAP_WEDGED : KTAP_FAIL,
			"cannot measure a baseline: %s", strerror(-ret));
		return;
	}
	snprintf(params, sizeof(params), "gate_ms=%d", gate_ms(s));
	load.path = path;
	load.params = params;
	ret = module_path(s, module, path, sizeof(path));
	if (!ret)
		ret = module_load_start(&load);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start loading %s: %s", module,
			strerror(-ret));
		return;
	}
	ret = knob_wait_long(module, "started", 1, s->timeout_ms, NULL);
	hold = ret ? LOAD_RUNNING : load_wait_held(s, &load, s->timeout_ms);
	if (hold != LOAD_HELD) {
		gate_open(module);
		if (!chain_load_back(ctx, module, &load))
			return;
		verdict(ctx, KTAP_FAIL,
			"the load %s while the init's job was held (done=%ld at return)",
			hold == LOAD_RETURNED ? "returned" :
			"was neither seen held nor returned",
			load.child.report.has_value ? load.child.report.value : -1L);
		return;
	}
	diag("the load is held while job A is (%s)", how);

	/* A, let go, leads to B and ends: its end wakes the load. */
	if (s->view != TASK_VIEW_NONE && task_sleeps(load.child.pid, &before))
		before = -1;
	knob_write(module, "open_first", "1");
	hold = chain_held_again(s, module, &load, before);
	knob_read_long(module, "done", &done);
	diag("A let go: B %s, the load %s", done == 1 ? "done" : "not done",
	     hold == LOAD_HELD ? "held again" : hold == LOAD_RETURNED ?
	     "returned" : "neither returned nor was seen held again");
	gate_open(module);
	if (!chain_load_back(ctx, module, &load))
		return;
	ret = module_load_result(&load);
	done = load.child.report.has_value ? load.child.report.value : -1L;
	diag("at its return: done=%ld (B's)", done);
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading %s failed: %s", module,
			strerror(-ret));
	else if (done != 1)
		verdict(ctx, KTAP_FAIL,
			"the load returned while B was held (%s)", how);
	else if (hold != LOAD_HELD)
		verdict(ctx, KTAP_FAIL,
			"the load was not seen held while B was");
}

/* ma_chained: the init queues A, A queues B once the init has returned. */
void case_chained_async_init_completes(struct case_ctx *ctx)
{
	chain_completes(ctx, "ma_chained", "B queued by A");
}

/*
 * ma_worker_chain: the init's worker (a plain workqueue's) queues A while
 * the init waits for it; A queues B once the init has returned.
 */
void case_worker_chain_completes(struct case_ctx *ctx)
{
	chain_completes(ctx, "ma_worker_chain",
			"A queued by the init's worker, B by A");
}

/*
 * ma_wq_handoff: the init queues A; A, once the init has returned, flushes
 * a plain work item that queues B (pci_call_probe()'s work_on_cpu() under
 * async probing).
 */
void case_workqueue_handoff_from_job_completes(struct case_ctx *ctx)
{
	chain_completes(ctx, "ma_wq_handoff",
			"B queued by a work item A flushed");
}
