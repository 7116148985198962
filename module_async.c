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
 * Each case below checks one of these behaviours with the test modules in
 * modules/ and reports one KTAP line. An async job that must wait does so on
 * a gate (modules/ma_job.h) that this runner opens, so a policy can be
 * measured without wedging the kernel: hold a gate, load, see whether the
 * load returned before the gate opened, open it, see the load return. Loads
 * and unloads run in child processes under a watchdog (lib/child.h). Cases
 * that would deadlock this kernel for good ("unsafe") run only where the
 * policy probe says they cannot, or with --allow-deadlock in a throw-away VM.
 *
 * A genuine deadlock is a verdict, not a hung run. When a case's load or
 * async job does not come back within the bound (--timeout-ms), the case
 * prints its evidence as "#" lines (the kernel's warnings and hung-task
 * reports since it began, the stuck tasks' stacks, the kernel's dump of
 * blocked tasks from sysrq w, and the wait-for cycle those stacks show),
 * then "not ok N <case> # TIMEOUT <bound>s" and "# kernel wedged by <case>".
 * The kernel cannot load or unload anything after that, so nothing more is
 * tried: every remaining case is "ok M <name> # SKIP kernel wedged by
 * <case>", and the run ends with the totals and exit status 1. A harness
 * can run the remaining cases on a fresh kernel (tools/vm-run.sh does).
 *
 * Thresholds come from a baseline measured in the same run; no case sleeps
 * for a fixed time. Everything the runner changes is put back: modules it
 * loaded are unloaded, knobs get their saved values, gates are opened.
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

#include "lib/child.h"
#include "lib/diag.h"
#include "lib/kmsg.h"
#include "lib/knob.h"
#include "lib/ktap.h"
#include "lib/module.h"
#include "lib/sysrq.h"
#include "lib/tasks.h"
#include "lib/waitfor.h"

/* Bound of every wait that should end; a failing case pays it once. */
#define DEFAULT_TIMEOUT_MS	10000

/*
 * A load still running this long after it started counts as "held": a
 * multiple of the slowest of a few plain loads measured in this run, with a
 * floor against a coarse clock. A held load never returns by itself, so the
 * factor only has to cover a plain load's jitter.
 */
#define BASELINE_LOADS		3
#define HOLD_FACTOR		10
#define HOLD_FLOOR_MS		100

/* The gates' safety timeout, in units of the runner's own timeout. */
#define GATE_MS_FACTOR		3

/* A module name no modprobe will find (warn_on_sync_request_from_async). */
#define ABSENT_MODULE		"ma_absent_module"

#define NR_TEST_MODULES		ARRAY_SIZE(test_modules)

static const char * const test_modules[] = {
	"ma_async_init", "ma_worker_async", "ma_gate", "ma_plain",
	"ma_request", "ma_elv", "ma_nested",
};

/* Test modules whose job can be held on a gate. */
static const char * const gated_modules[] = {
	"ma_async_init", "ma_worker_async", "ma_gate",
};

enum safety {
	SAFE,			/* safe on every kernel */
	UNSAFE_IF_ALWAYS_SYNC,	/* deadlocks where init syncs all async work */
	UNSAFE,			/* deadlocks under either policy */
};

enum policy {
	POLICY_UNPROBED,
	POLICY_UNKNOWN,
	POLICY_ALWAYS_SYNC,	/* init waits for all async work (5.17+) */
	POLICY_SKIP_IF_UNUSED,	/* only if init used async (3.8 - 5.16) */
};

/* Room for "/<module>.ko" after the modules directory in a PATH_MAX. */
#define MODULES_DIR_MAX		(PATH_MAX - MA_MODULE_NAME_LEN - 8)

struct suite {
	char modules_dir[MODULES_DIR_MAX];
	int timeout_ms;
	bool allow_deadlock;
	bool expect_skip;
	char skip_all[256];	/* why every case skips, or "" */
	long long baseline_us;	/* slowest plain load; -1: not measured */
	int hold_ms;		/* a load running this long is held */
	enum policy policy;
};

struct ma_case;

/* What a case works with: the suite, and what was there when it began. */
struct case_ctx {
	struct suite *suite;
	const struct ma_case *c;
	struct ktap_verdict verdict;
	long long begin_us;		/* when the case began */
	bool kmsg_ok;
	struct kmsg_scan kmsg;		/* positioned at the case's start */
	struct modlist before;		/* modules loaded at the case's start */
};

struct ma_case {
	const char *name;
	enum safety safety;
	void (*run)(struct case_ctx *ctx);
	const char *target;	/* what the case requests, if anything */
};

/*
 * module.async_probe as found, while a case has changed it ("" otherwise):
 * the signal handler restores it if the run is interrupted.
 */
static char saved_async_probe[16];

static double ms(long long us)
{
	return us / 1000.0;
}

/* ---- verdicts ---------------------------------------------------------- */

/*
 * Set the case's verdict, replacing any earlier one. A TIMEOUT is a wait of
 * the suite's bound that expired, but the kernel came back; WEDGED is one
 * that did not come back, a genuine deadlock: nothing more can be loaded or
 * unloaded, so the case ends there, and the run after it (see run_case()).
 */
static void __printf(3, 4)
verdict(struct case_ctx *ctx, enum ktap_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->verdict.reason, sizeof(ctx->verdict.reason), fmt, ap);
	va_end(ap);
	ctx->verdict.kind = kind;
	if (kind == KTAP_TIMEOUT || kind == KTAP_WEDGED)
		ctx->verdict.bound_ms = ctx->suite->timeout_ms;
	if (kind == KTAP_WEDGED)
		ktap_wedge(ctx->c->name);
}

/* Did a wait of the case not end within the bound (wedged or not)? */
static bool timed_out(const struct case_ctx *ctx)
{
	return ctx->verdict.kind == KTAP_TIMEOUT ||
	       ctx->verdict.kind == KTAP_WEDGED;
}

/* Has the case found anything but a pass (a failure, a timeout, a skip)? */
static bool verdict_given(const struct case_ctx *ctx)
{
	return ctx->verdict.kind != KTAP_PASS;
}

/* A load that failed: a timeout means the kernel is stuck. */
static void fail_load(struct case_ctx *ctx, const char *module, int ret)
{
	if (ret == -ETIMEDOUT)
		verdict(ctx, KTAP_WEDGED, "loading %s did not return within %d ms", module,
		       ctx->suite->timeout_ms);
	else
		verdict(ctx, KTAP_FAIL, "cannot load %s: %s", module, strerror(-ret));
}

/* ---- the test modules -------------------------------------------------- */

static int module_path(const struct suite *s, const char *module,
		       char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.ko", s->modules_dir, module);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int gate_ms(const struct suite *s)
{
	return GATE_MS_FACTOR * s->timeout_ms;
}

/* Load a test module and wait for the load, with the suite's bound. */
static int test_module_load(struct suite *s, const char *module,
			    const char *params)
{
	char path[PATH_MAX], all[512];
	int ret;

	ret = module_path(s, module, path, sizeof(path));
	if (ret)
		return ret;
	snprintf(all, sizeof(all), "gate_ms=%d %s", gate_ms(s),
		 params ? params : "");
	return module_load(path, all, s->timeout_ms);
}

static int gate_open(const char *module)
{
	return knob_write(module, "open", "1");
}

static int job_start(const char *module)
{
	return knob_write(module, "start", "1");
}

/* Wait until the module's job has finished; 0 or -ETIMEDOUT. */
static int job_wait_done(struct suite *s, const char *module)
{
	return knob_wait_long(module, "done", 1, s->timeout_ms, NULL);
}

/* Log a module's knobs as "name: knob=value ..." for the evidence. */
static void log_knobs(const char *module)
{
	static const char * const knobs[] = {
		"started", "done", "timed_out", "result", "target", "disk",
	};
	char line[512], value[64];
	size_t i, n;

	n = snprintf(line, sizeof(line), "%s:", module);
	for (i = 0; i < ARRAY_SIZE(knobs) && n < sizeof(line); i++) {
		if (knob_read(module, knobs[i], value, sizeof(value)))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %s=%s", knobs[i],
			      value);
	}
	diag("%s", line);
}

static void log_module_state(const char *name)
{
	char norm[MA_MODULE_NAME_LEN], state[16];

	module_name_normalize(norm, name, sizeof(norm));
	if (module_state(norm, state, sizeof(state)))
		snprintf(state, sizeof(state), "not loaded");
	diag("module %s: %s", norm, state);
}

/* ---- the run's baseline and the kernel's policy ------------------------ */

/*
 * How long a plain load takes here, now: the slowest of a few loads and
 * unloads of ma_plain. Everything "too long" in this run derives from it.
 */
static int suite_baseline(struct suite *s)
{
	struct module_load load = { .params = "" };
	char path[PATH_MAX];
	long long slowest = 0;
	int i, ret;

	if (s->baseline_us >= 0)
		return 0;

	module_path(s, "ma_plain", path, sizeof(path));
	load.path = path;
	for (i = 0; i < BASELINE_LOADS; i++) {
		ret = module_load_start(&load);
		if (ret)
			return ret;
		if (module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
			child_describe(&load.child, "baseline load of ma_plain");
			return -ETIMEDOUT;
		}
		ret = module_load_result(&load);
		if (ret)
			return ret;
		if (child_elapsed_us(&load.child) > slowest)
			slowest = child_elapsed_us(&load.child);
		ret = module_unload("ma_plain", s->timeout_ms);
		if (ret)
			return ret;
	}
	s->baseline_us = slowest;
	s->hold_ms = HOLD_FACTOR * (slowest + 999) / 1000;
	if (s->hold_ms < HOLD_FLOOR_MS)
		s->hold_ms = HOLD_FLOOR_MS;
	diag("baseline: a plain load takes %.1f ms (slowest of %d)",
	     ms(slowest), BASELINE_LOADS);
	diag("a load still running after %d ms is held", s->hold_ms);
	return 0;
}

/* A load of ma_plain next to ma_gate's job held on its gate. */
struct held_load {
	bool held;		/* still running when the gate opened */
	bool stuck;		/* did not return after the gate opened */
	long long load_us;	/* start of the load to its return */
	long long after_open_us;	/* gate opening to the load's return */
	int result;		/* the load's outcome */
};

/*
 * Hold an unrelated async job (ma_gate's), load ma_plain with @params and
 * see whether the load returns while the job is held. Then open the gate:
 * a held load must now return (the causality check). Unloads both modules.
 * Returns 0 if it could measure, -errno (with a diagnostic) if not.
 */
static int load_beside_held_job(struct suite *s, const char *params,
				struct held_load *h)
{
	struct module_load load = { .params = params };
	char path[PATH_MAX];
	long long opened;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = suite_baseline(s);
	if (ret) {
		diag("cannot measure a baseline: %s", strerror(-ret));
		h->stuck = ret == -ETIMEDOUT;
		return ret;
	}
	ret = test_module_load(s, "ma_gate", NULL);
	h->stuck = ret == -ETIMEDOUT;
	if (!ret)
		ret = job_start("ma_gate");
	if (!ret)
		ret = knob_wait_long("ma_gate", "started", 1, s->timeout_ms,
				     NULL);
	if (ret) {
		diag("cannot hold an async job with ma_gate: %s",
		     strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}

	module_path(s, "ma_plain", path, sizeof(path));
	load.path = path;
	ret = module_load_start(&load);
	if (ret) {
		diag("cannot start loading ma_plain: %s", strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}
	h->held = module_load_wait(&load, s->hold_ms) == CHILD_RUNNING;

	opened = now_us();
	gate_open("ma_gate");
	if (h->held && module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
		h->stuck = true;
		child_describe(&load.child, "load of ma_plain");
		h->result = -ETIMEDOUT;
		return 0;
	}
	h->result = module_load_result(&load);
	h->load_us = child_elapsed_us(&load.child);
	if (h->held)
		h->after_open_us = load.child.report.end_us - opened;
	diag("ma_plain%s%s: load took %.1f ms, %s",
	     params && *params ? " with " : "", params ? params : "",
	     ms(h->load_us),
	     h->held ? "held until the unrelated job's gate opened" :
		       "while an unrelated async job was held");
	if (h->held)
		diag("it returned %.1f ms after the gate opened",
		     ms(h->after_open_us));

	/* ma_plain's unload would wait for ma_gate's job too. */
	if (job_wait_done(s, "ma_gate"))
		log_knobs("ma_gate");
	module_unload("ma_plain", s->timeout_ms);
	module_unload("ma_gate", s->timeout_ms);
	return 0;
}

static const char *policy_name(enum policy policy)
{
	switch (policy) {
	case POLICY_ALWAYS_SYNC:
		return "always-sync";
	case POLICY_SKIP_IF_UNUSED:
		return "skip-if-unused";
	case POLICY_UNKNOWN:
	case POLICY_UNPROBED:
	default:
		return "unknown";
	}
}

/*
 * Does do_init_module() wait for async work the module did not start? The
 * probe is safe on every kernel: the job it holds is released by its gate.
 * It runs in the first case that needs it; if it does not come back, that
 * case wedged the kernel.
 */
static void suite_probe_policy(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	struct held_load h;

	if (s->policy != POLICY_UNPROBED)
		return;
	s->policy = POLICY_UNKNOWN;
	if (!load_beside_held_job(s, NULL, &h) && !h.result) {
		if (!h.held)
			s->policy = POLICY_SKIP_IF_UNUSED;
		else if (!h.stuck)
			s->policy = POLICY_ALWAYS_SYNC;
	}
	diag("policy: %s", policy_name(s->policy));
	if (h.stuck)
		verdict(ctx, KTAP_WEDGED, "the policy probe's load did not return within %d ms",
		       s->timeout_ms);
}

/* ---- prerequisites ----------------------------------------------------- */

static bool warnings_panic(void)
{
	char value[16];

	return !sysfs_read("/proc/sys/kernel/panic_on_warn", value,
			   sizeof(value)) && strcmp(value, "0");
}

/* The case's job calls request_module() from async: the kernel WARNs. */
static bool skip_if_warn_panics(struct case_ctx *ctx)
{
	if (!warnings_panic())
		return false;
	verdict(ctx, KTAP_SKIP, "kernel.panic_on_warn is set: the kernel's warning would panic it");
	return true;
}

/*
 * Why this case cannot load @target (built in, already loaded, not
 * installed), in @buf; NULL if it can.
 */
static const char *why_not_loadable(const struct case_ctx *ctx,
				    const char *target, char *buf, size_t len)
{
	char name[MA_MODULE_NAME_LEN];

	module_name_normalize(name, target, sizeof(name));
	if (module_builtin(name))
		snprintf(buf, len, "%s is built in: there is nothing to load",
			 target);
	else if (knob_exists(name, NULL) || modlist_has(&ctx->before, name))
		snprintf(buf, len, "%s is already loaded: unload it to test loading it",
			 target);
	else if (!module_available(name))
		snprintf(buf, len, "%s is not available to modprobe (modules.dep)",
			 target);
	else
		return NULL;
	return buf;
}

static bool skip_unless_loadable(struct case_ctx *ctx, const char *target)
{
	char reason[128];

	if (!why_not_loadable(ctx, target, reason, sizeof(reason)))
		return false;
	verdict(ctx, KTAP_SKIP, "%s", reason);
	return true;
}

/*
 * Would this case wedge this kernel for good? Then it skips. True if the
 * case must not run (its verdict is set: a skip, or the probe's wedge).
 */
static bool skip_if_unsafe(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;

	if (ctx->c->safety == SAFE || s->allow_deadlock)
		return false;
	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return true;
	if (s->policy == POLICY_SKIP_IF_UNUSED && ctx->c->safety != UNSAFE)
		return false;

	if (s->policy == POLICY_ALWAYS_SYNC)
		verdict(ctx, KTAP_SKIP, "would deadlock: this kernel syncs all async work on module init");
	else if (ctx->c->safety == UNSAFE)
		verdict(ctx, KTAP_SKIP, "would deadlock: the nested module's load waits for the job loading it");
	else
		verdict(ctx, KTAP_SKIP, "would deadlock unless the kernel skips the sync: policy unknown");
	return true;
}

static void __printf(2, 3)
suite_skip_all(struct suite *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->skip_all, sizeof(s->skip_all), fmt, ap);
	va_end(ap);
}

static void suite_check_prerequisites(struct suite *s)
{
	char path[PATH_MAX], value[64];
	size_t i;

	if (geteuid() != 0) {
		suite_skip_all(s, "not root");
		return;
	}
	for (i = 0; i < NR_TEST_MODULES; i++) {
		module_path(s, test_modules[i], path, sizeof(path));
		if (access(path, R_OK)) {
			suite_skip_all(s, "test modules not built: no %s", path);
			return;
		}
	}
	if (access("/proc/modules", R_OK)) {
		suite_skip_all(s, "no module support (CONFIG_MODULES)");
		return;
	}
	if (!sysfs_read("/proc/sys/kernel/modules_disabled", value,
			sizeof(value)) && strcmp(value, "0")) {
		suite_skip_all(s, "module loading is disabled (kernel.modules_disabled)");
		return;
	}
	if (!knob_read("module", "sig_enforce", value, sizeof(value)) &&
	    !strcmp(value, "Y")) {
		suite_skip_all(s, "module signatures enforced: the test modules are unsigned");
		return;
	}
	if (!sysfs_read("/sys/kernel/security/lockdown", path, sizeof(path)) &&
	    !strstr(path, "[none]") && path[0]) {
		suite_skip_all(s, "kernel lockdown is on (%s)", path);
		return;
	}
	for (i = 0; i < NR_TEST_MODULES; i++) {
		if (knob_exists(test_modules[i], NULL)) {
			suite_skip_all(s, "%s is already loaded (left over from an earlier run?)",
				       test_modules[i]);
			return;
		}
	}
}

/* ---- cases: async work started by init --------------------------------- */

/*
 * Load @module, whose init leads to an async job held on a gate. The load
 * must not return while the job is held, and the job must be done (its
 * "done" knob, read by the loading child the moment finit_module()
 * returned) when it does.
 */
static void held_init_completes(struct case_ctx *ctx, const char *module)
{
	struct module_load load = { .knob_after = "done" };
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[64];
	long long deadline, started_at, opened_at;
	enum child_status status = CHILD_RUNNING;
	long started = 0, timed_out = -1;
	int ret;

	ret = suite_baseline(s);
	if (ret == -ETIMEDOUT) {
		verdict(ctx, KTAP_WEDGED, "a load or unload of ma_plain did not return within %d ms",
		       s->timeout_ms);
		return;
	}
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot measure a baseline: %s", strerror(-ret));
		return;
	}
	snprintf(params, sizeof(params), "gate_ms=%d", gate_ms(s));
	load.path = path;
	load.params = params;
	ret = module_path(s, module, path, sizeof(path));
	if (!ret)
		ret = module_load_start(&load);
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start loading %s: %s", module, strerror(-ret));
		return;
	}

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
		/* A load that does not return once its gate opens is stuck. */
		gate_open(module);
		log_knobs(module);
		if (module_load_wait(&load, s->hold_ms) == CHILD_RUNNING) {
			child_describe(&load.child, "load");
			verdict(ctx, KTAP_WEDGED, "the job did not start within %d ms, nor did the load return",
			       s->timeout_ms);
		} else {
			verdict(ctx, KTAP_TIMEOUT, "the async job did not start within %d ms",
				     s->timeout_ms);
		}
		return;
	}
	if (status == CHILD_RUNNING)
		status = module_load_wait(&load, s->hold_ms);
	if (status != CHILD_RUNNING) {
		ret = module_load_result(&load);
		gate_open(module);
		if (ret) {
			verdict(ctx, KTAP_FAIL, "loading %s failed: %s", module,
			     strerror(-ret));
			return;
		}
		diag("load returned after %.1f ms; the job had %s; done=%ld at return",
		     ms(child_elapsed_us(&load.child)),
		     started ? "started and was held on its gate" :
			       "not started yet",
		     load.child.report.has_value ? load.child.report.value :
						   -1L);
		verdict(ctx, KTAP_FAIL, "the load returned while its async job was still running");
		return;
	}

	opened_at = now_us();
	gate_open(module);
	status = module_load_wait(&load, s->timeout_ms);
	if (status == CHILD_RUNNING) {
		child_describe(&load.child, "load");
		log_knobs(module);
		verdict(ctx, KTAP_WEDGED, "the load did not return within %d ms of the gate opening",
		       s->timeout_ms);
		return;
	}
	ret = module_load_result(&load);
	knob_read_long(module, "timed_out", &timed_out);
	diag("load held %.1f ms with its job, back %.1f ms after the gate opened",
	     ms(opened_at - started_at),
	     ms(load.child.report.end_us - opened_at));
	diag("at its return: done=%ld, timed_out=%ld",
	     load.child.report.has_value ? load.child.report.value : -1L,
	     timed_out);
	if (ret)
		verdict(ctx, KTAP_FAIL, "loading %s failed: %s", module, strerror(-ret));
	else if (!load.child.report.has_value || load.child.report.value != 1)
		verdict(ctx, KTAP_FAIL, "the load returned before its async job was done");
	else if (timed_out)
		verdict(ctx, KTAP_FAIL, "the job was released by its safety timeout, not by the gate");
}

static void case_async_init_completes(struct case_ctx *ctx)
{
	held_init_completes(ctx, "ma_async_init");
}

static void case_async_worker_init_completes(struct case_ctx *ctx)
{
	held_init_completes(ctx, "ma_worker_async");
}

/* ---- cases: async work the loading module did not start ---------------- */

/* Load ma_plain (with @params) beside a held job: must not wait for it. */
static void plain_load_skips(struct case_ctx *ctx, const char *params)
{
	struct held_load h;
	int ret;

	ret = load_beside_held_job(ctx->suite, params, &h);
	if (h.stuck) {
		verdict(ctx, KTAP_WEDGED, "a load did not return within %d ms%s",
		       ctx->suite->timeout_ms,
		       ret ? "" : " of the unrelated job's gate opening");
	} else if (ret) {
		verdict(ctx, KTAP_FAIL, "could not hold an unrelated job and load beside it");
	} else if (h.result) {
		verdict(ctx, KTAP_FAIL, "loading ma_plain failed: %s", strerror(-h.result));
	} else if (h.held) {
		verdict(ctx, KTAP_FAIL, "the load waited for an unrelated async job (%.1f ms after its gate)",
		     ms(h.after_open_us));
	}
}

static void case_plain_load_skips_unrelated_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;

	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return;
	if (s->policy == POLICY_ALWAYS_SYNC && !s->expect_skip) {
		verdict(ctx, KTAP_SKIP, "policy always-sync: this kernel syncs all async work on module init");
		return;
	}
	plain_load_skips(ctx, NULL);
}

static void case_async_probe_skips_unrelated_async(struct case_ctx *ctx)
{
	plain_load_skips(ctx, "async_probe=1");
}

/* ---- cases: module loads requested by async work ----------------------- */

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
	struct suite *s = ctx->suite;
	char params[128];
	long long begin;
	long done = 0;
	int ret;

	snprintf(params, sizeof(params), "target=%s", target);
	ret = test_module_load(s, "ma_request", params);
	if (ret) {
		fail_load(ctx, "ma_request", ret);
		return false;
	}
	begin = now_us();
	ret = job_start("ma_request");
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start ma_request's job: %s", strerror(-ret));
		return false;
	}
	if (knob_wait_long("ma_request", "done", 1, s->timeout_ms, &done)) {
		log_knobs("ma_request");
		log_module_state(target);
		modules_dump_loading();
		verdict(ctx, KTAP_WEDGED, "request_module(\"%s\") from an async job did not return within %d ms",
		       target, s->timeout_ms);
		return false;
	}
	*result = -1;
	knob_read_long("ma_request", "result", result);
	diag("request_module(\"%s\") from an async job returned %ld after %.1f ms",
	     target, *result, ms(now_us() - begin));
	return true;
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
		verdict(ctx, KTAP_FAIL, "request_module(\"%s\") returned %ld", target, result);
	else if (!module_is_live(name))
		verdict(ctx, KTAP_FAIL, "%s is not live after request_module() returned 0",
		     name);
}

static void case_request_module_from_async(struct case_ctx *ctx)
{
	const char *target = ctx->c->target;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, target))
		return;
	request_and_check_live(ctx, target);
}

/* Targets for the async_probe variant, in order of preference. */
static const char * const async_probe_targets[] = {
	"kyber-iosched", "bfq", "null_blk",
};

static void case_request_module_from_async_async_probe(struct case_ctx *ctx)
{
	char saved[sizeof(saved_async_probe)], value[16], reason[128];
	const char *target = NULL;
	size_t i;
	int ret;

	if (skip_if_warn_panics(ctx))
		return;
	if (knob_read("module", "async_probe", saved, sizeof(saved))) {
		verdict(ctx, KTAP_SKIP, "no module.async_probe knob in this kernel");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(async_probe_targets) && !target; i++) {
		if (!why_not_loadable(ctx, async_probe_targets[i], reason,
				      sizeof(reason)))
			target = async_probe_targets[i];
	}
	if (!target) {
		verdict(ctx, KTAP_SKIP, "none of kyber-iosched, bfq, null_blk can be loaded (%s)",
		     reason);
		return;
	}

	strcpy(saved_async_probe, saved);
	ret = knob_write("module", "async_probe", "1");
	if (ret) {
		saved_async_probe[0] = '\0';
		verdict(ctx, KTAP_FAIL, "cannot set module.async_probe: %s", strerror(-ret));
		return;
	}
	diag("module.async_probe was %s, is 1 for this case", saved);

	request_and_check_live(ctx, target);

	ret = knob_write("module", "async_probe", saved);
	if (ret) {
		diag("cannot restore module.async_probe to %s: %s", saved,
		     strerror(-ret));
		if (!verdict_given(ctx))
			verdict(ctx, KTAP_FAIL, "module.async_probe not restored");
		return;
	}
	saved_async_probe[0] = '\0';
	knob_read("module", "async_probe", value, sizeof(value));
	diag("module.async_probe restored: %s", value);
}

/* ---- case: I/O scheduler switch from async work ------------------------ */

#define NULL_BLK_DISK	"nullb0"

/* Schedulers the case can switch to, and the modules that provide them. */
static const char * const elevator_targets[][2] = {
	{ "kyber", "kyber-iosched" },
	{ "bfq", "bfq" },
};

/* The active scheduler: the name in brackets in "none [kyber] bfq". */
static int scheduler_active(const char *path, char *buf, size_t len)
{
	char line[256], *open, *close;
	int ret;

	ret = sysfs_read(path, line, sizeof(line));
	if (ret)
		return ret;
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close)
		return -EINVAL;
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return 0;
}

/* Make sure nullb0 exists, loading null_blk with modprobe if needed. */
static bool null_blk_ready(struct case_ctx *ctx, const char *path)
{
	static const char * const argv[] = {
		"modprobe", "null_blk", "nr_devices=1", NULL,
	};
	struct suite *s = ctx->suite;
	int ret;

	if (!access(path, F_OK))
		return true;
	if (knob_exists("null_blk", NULL)) {
		verdict(ctx, KTAP_SKIP, "null_blk is loaded but has no %s", NULL_BLK_DISK);
		return false;
	}
	if (!module_available("null_blk")) {
		verdict(ctx, KTAP_SKIP, "null_blk is not available to modprobe (modules.dep)");
		return false;
	}
	ret = modprobe((const char * const *)argv, s->timeout_ms);
	if (ret == -ETIMEDOUT)
		verdict(ctx, KTAP_WEDGED, "modprobe null_blk did not return within %d ms",
		       s->timeout_ms);
	else if (ret)
		verdict(ctx, KTAP_FAIL, "modprobe null_blk failed: %d", ret);
	return !ret;
}

static void case_elevator_switch_from_async(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	char path[PATH_MAX], params[128], saved[32], active[32], reason[128];
	const char *elevator = NULL, *module = NULL;
	long result = -1, done = 0;
	size_t i;
	int ret;

	if (skip_if_warn_panics(ctx))
		return;
	for (i = 0; i < ARRAY_SIZE(elevator_targets) && !elevator; i++) {
		if (why_not_loadable(ctx, elevator_targets[i][1], reason,
				     sizeof(reason)))
			continue;
		elevator = elevator_targets[i][0];
		module = elevator_targets[i][1];
	}
	if (!elevator) {
		verdict(ctx, KTAP_SKIP, "neither kyber-iosched nor bfq can be loaded here (%s)",
		     reason);
		return;
	}

	snprintf(path, sizeof(path), "/sys/block/%s/queue/scheduler",
		 NULL_BLK_DISK);
	if (!null_blk_ready(ctx, path))
		return;
	ret = scheduler_active(path, saved, sizeof(saved));
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot read %s: %s", path, strerror(-ret));
		return;
	}

	snprintf(params, sizeof(params), "disk=%s target=%s", NULL_BLK_DISK,
		 elevator);
	ret = test_module_load(s, "ma_elv", params);
	if (ret) {
		fail_load(ctx, "ma_elv", ret);
		return;
	}
	ret = job_start("ma_elv");
	if (ret) {
		verdict(ctx, KTAP_FAIL, "cannot start ma_elv's job: %s", strerror(-ret));
		return;
	}
	if (knob_wait_long("ma_elv", "done", 1, s->timeout_ms, &done)) {
		log_knobs("ma_elv");
		log_module_state(module);
		modules_dump_loading();
		verdict(ctx, KTAP_WEDGED, "writing %s to %s from an async job did not return within %d ms",
		       elevator, path, s->timeout_ms);
		return;
	}
	knob_read_long("ma_elv", "result", &result);
	ret = scheduler_active(path, active, sizeof(active));
	diag("%s: %s -> %s from an async job: result %ld, active now: %s",
	     NULL_BLK_DISK, saved, elevator, result, ret ? "?" : active);
	if (result)
		verdict(ctx, KTAP_FAIL, "the async job's write of %s failed: %ld", elevator,
		     result);
	else if (ret || strcmp(active, elevator))
		verdict(ctx, KTAP_FAIL, "%s is not the active scheduler of %s", elevator,
		     NULL_BLK_DISK);

	ret = sysfs_write(path, saved);
	if (ret) {
		diag("cannot restore %s's scheduler %s: %s", NULL_BLK_DISK,
		     saved, strerror(-ret));
		if (!verdict_given(ctx))
			verdict(ctx, KTAP_FAIL, "cannot restore the scheduler");
	}
}

/* ---- case: nested async module loading ---------------------------------- */

static void case_nested_async_load(struct case_ctx *ctx)
{
	long done = 0;

	if (skip_if_warn_panics(ctx) || skip_unless_loadable(ctx, "ma_nested"))
		return;
	request_and_check_live(ctx, "ma_nested");
	if (verdict_given(ctx))
		return;
	if (knob_wait_long("ma_nested", "done", 1, ctx->suite->timeout_ms,
			   &done))
		verdict(ctx, KTAP_FAIL, "ma_nested's own async job is not done (done=%ld)",
		     done);
}

/* ---- case: the kernel's warning ---------------------------------------- */

/*
 * A synchronous request_module() from an async job must trigger kmod.c's
 * WARN_ON_ONCE(wait && current_is_async()). Safe everywhere: the module
 * requested does not exist, so modprobe fails fast and no do_init_module()
 * runs. The warning fires once per boot: an earlier one counts, found in
 * what the kernel log still holds.
 */
static void case_warn_on_sync_request_from_async(struct case_ctx *ctx)
{
	static struct kmsg_scan earlier;
	bool earlier_ok, fired;
	long result;

	if (skip_if_warn_panics(ctx))
		return;
	if (!ctx->kmsg_ok || kmsg_open(&earlier, true)) {
		verdict(ctx, KTAP_SKIP, "cannot read the kernel log (/dev/kmsg)");
		return;
	}
	if (module_available(ABSENT_MODULE)) {
		verdict(ctx, KTAP_SKIP, "%s exists: cannot request a missing module",
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
		verdict(ctx, KTAP_SKIP, "no warning, and the log lost records: an earlier one may be gone");
	} else {
		verdict(ctx, KTAP_FAIL, "no WARNING from __request_module() in the kernel log");
	}
}

/* ---- the cases --------------------------------------------------------- */

static const struct ma_case cases[] = {
	/* name, safety, function, target */
	{ "async_init_completes", SAFE,
	  case_async_init_completes, NULL },
	{ "async_worker_init_completes", SAFE,
	  case_async_worker_init_completes, NULL },
	{ "plain_load_skips_unrelated_async", SAFE,
	  case_plain_load_skips_unrelated_async, NULL },
	{ "async_probe_skips_unrelated_async", SAFE,
	  case_async_probe_skips_unrelated_async, NULL },
	{ "request_module_from_async_null_blk", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async, "null_blk" },
	{ "request_module_from_async_kyber-iosched", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async, "kyber-iosched" },
	{ "request_module_from_async_bfq", UNSAFE_IF_ALWAYS_SYNC,
	  case_request_module_from_async, "bfq" },
	{ "request_module_from_async_async_probe", SAFE,
	  case_request_module_from_async_async_probe, NULL },
	{ "elevator_switch_from_async", UNSAFE_IF_ALWAYS_SYNC,
	  case_elevator_switch_from_async, NULL },
	{ "nested_async_load", UNSAFE,
	  case_nested_async_load, NULL },
	{ "warn_on_sync_request_from_async", SAFE,
	  case_warn_on_sync_request_from_async, NULL },
};

static const char *safety_name(enum safety safety)
{
	switch (safety) {
	case SAFE:
		return "safe";
	case UNSAFE_IF_ALWAYS_SYNC:
		return "unsafe-if-always-sync";
	case UNSAFE:
	default:
		return "unsafe";
	}
}

/* ---- running a case ---------------------------------------------------- */

static void case_begin(struct case_ctx *ctx)
{
	ctx->kmsg_ok = !kmsg_open(&ctx->kmsg, false);
	if (ctx->kmsg_ok)
		kmsg_reset(&ctx->kmsg, "[ma_");
	if (modlist_read(&ctx->before))
		ctx->before.nr = 0;
}

/*
 * Put back what the case changed: open every gate, let every job finish,
 * unload every module loaded since the case began. The case itself restored
 * the knobs it changed. After a wedge nothing is waited for or unloaded:
 * every unload would hang (delete_module() syncs all async work too).
 */
static void case_cleanup(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	long started;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(gated_modules); i++)
		if (knob_exists(gated_modules[i], "open"))
			gate_open(gated_modules[i]);
	for (i = 0; i < NR_TEST_MODULES && !ktap_wedged_by(); i++) {
		if (knob_read_long(test_modules[i], "started", &started) ||
		    !started || !job_wait_done(s, test_modules[i]))
			continue;
		if (verdict_given(ctx))
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_WEDGED, "%s's async job did not finish within %d ms of the case's end",
		       test_modules[i], s->timeout_ms);
	}
	if (ktap_wedged_by()) {
		diag("not unloading anything: every later load and unload would hang");
		return;
	}
	ret = modlist_unload_new(&ctx->before, s->timeout_ms);
	if (ret == -ETIMEDOUT) {
		if (verdict_given(ctx))
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_WEDGED, "unloading what the case loaded did not return within %d ms",
		       s->timeout_ms);
	} else if (ret) {
		diag("could not unload every module this case loaded");
	}
}

/* The kernel log since the case began, for a case that failed. */
static void case_log(struct case_ctx *ctx)
{
	if (!ctx->kmsg_ok)
		return;
	kmsg_scan(&ctx->kmsg);
	if (ctx->kmsg.nr_lines)
		diag("kernel log since the case began:");
	kmsg_report(&ctx->kmsg, "kernel: ");
}

/* Bounds of the evidence of a deadlock: its time and its length. */
#define SYSRQ_DUMP_MS		1000
#define EVIDENCE_TASKS_MAX	6

static bool same_frames(const struct task_stack *a, const struct task_stack *b)
{
	unsigned int i;

	if (a->nr_frames != b->nr_frames)
		return false;
	for (i = 0; i < a->nr_frames; i++)
		if (strcmp(a->frames[i], b->frames[i]))
			return false;
	return true;
}

/*
 * The stacks of the blocked tasks that take part in module loading or async
 * work, as /proc/<pid>/stack shows them; they join @involved.
 */
static void evidence_proc_stacks(struct task_set *involved)
{
	static struct task_set blocked;
	unsigned int i, shown = 0, others = 0;
	struct task_stack *t;

	tasks_read_blocked(&blocked);
	diag("blocked in module loading or async work (/proc/<pid>/stack, generic frames cut):");
	for (i = 0; i < blocked.nr; i++) {
		t = &blocked.tasks[i];
		if (!waitfor_involved(t)) {
			others++;
			continue;
		}
		task_set_add(involved, t);
		if (shown++ < EVIDENCE_TASKS_MAX)
			task_stack_report(t, "  ");
	}
	if (!shown)
		diag("  no such task");
	if (shown > EVIDENCE_TASKS_MAX)
		diag("  ... %u more such tasks", shown - EVIDENCE_TASKS_MAX);
	if (others + blocked.nr_more)
		diag("  (%u other tasks in D state)", others + blocked.nr_more);
}

/*
 * The kernel's own dump of blocked tasks (sysrq w); a stack already shown
 * is not shown again. Tasks seen only here join @involved.
 */
static void evidence_sysrq(struct task_set *involved)
{
	static struct blocked_dump dump;
	const struct task_stack *t, *seen;
	unsigned int i, shown = 0;
	int ret;

	ret = sysrq_show_blocked(&dump, SYSRQ_DUMP_MS);
	if (ret) {
		diag("sysrq w: no dump of blocked tasks: %s", strerror(-ret));
		return;
	}
	if (!dump.header) {
		diag("sysrq w: no dump of blocked tasks in the kernel log");
		return;
	}
	diag("sysrq w: %u blocked tasks", dump.tasks.nr + dump.tasks.nr_more);
	for (i = 0; i < dump.tasks.nr; i++) {
		t = &dump.tasks.tasks[i];
		seen = task_set_find(involved, t->pid);
		if (seen && same_frames(seen, t)) {
			diag("  task %d (%s): as above", t->pid, t->comm);
			continue;
		}
		if (!t->nr_frames) {
			/* A guessing unwinder's dump: every frame is "? ". */
			diag("  task %d (%s) state %c: no reliable frames (%u left out)",
			     t->pid, t->comm, t->state, t->nr_trimmed);
			continue;
		}
		if (!waitfor_involved(t)) {
			diag("  task %d (%s): %s", t->pid, t->comm, t->frames[0]);
			continue;
		}
		if (!seen)
			task_set_add(involved, t);
		if (shown++ < EVIDENCE_TASKS_MAX)
			task_stack_report(t, "  ");
	}
	if (shown > EVIDENCE_TASKS_MAX)
		diag("  ... %u more", shown - EVIDENCE_TASKS_MAX);
}

/*
 * The evidence of a deadlock, from what can be observed now: the kernel's
 * warnings and hung-task reports since the case began, the stacks of the
 * stuck tasks, the kernel's dump of blocked tasks, and the wait-for cycle
 * they show, or what they show instead. Nothing here waits for the kernel
 * to print more: a hung-task report that is not there yet is not waited
 * for, and the dump is read with a short bound.
 */
static void deadlock_evidence(struct case_ctx *ctx)
{
	static struct task_set involved;
	long long t0 = now_us();
	char line[1024], secs[16];

	if (ctx->kmsg_ok) {
		case_log(ctx);
		if (!ctx->kmsg.nr_hung &&
		    !sysfs_read("/proc/sys/kernel/hung_task_timeout_secs",
				secs, sizeof(secs)))
			diag("no hung-task report yet (kernel.hung_task_timeout_secs = %s)",
			     secs);
	} else {
		diag("no kernel log: /dev/kmsg cannot be read");
	}

	memset(&involved, 0, sizeof(involved));
	evidence_proc_stacks(&involved);
	evidence_sysrq(&involved);

	waitfor_cycle(&involved, line, sizeof(line));
	diag("wait-for cycle: %s", line);
	diag("evidence taken in %lld ms, %.1f s after the case began",
	     (now_us() - t0) / 1000, (now_us() - ctx->begin_us) / 1e6);
}

static void case_evidence(struct case_ctx *ctx)
{
	if (timed_out(ctx))
		deadlock_evidence(ctx);
	else if (ctx->verdict.kind == KTAP_FAIL)
		case_log(ctx);
}

/*
 * Run one case and print its result. After a case that wedged the kernel
 * the rest are not run: ktap_may_run() reports them as SKIP, naming it.
 */
static void run_case(struct suite *s, const struct ma_case *c)
{
	static struct case_ctx ctx;
	bool timed_out_in_case;

	if (!ktap_may_run(c->name))
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
		if (!skip_if_unsafe(&ctx))
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
	}
	ktap_result(c->name, &ctx.verdict);
}

/* ---- main -------------------------------------------------------------- */

/* On SIGINT/SIGTERM: release held jobs and restore the knob, then go. */
static void on_signal(int sig)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(gated_modules); i++) {
		if (knob_path(path, sizeof(path), gated_modules[i], "open"))
			continue;
		sysfs_write(path, "1");
	}
	if (saved_async_probe[0])
		knob_write("module", "async_probe", saved_async_probe);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"Check how module loading interacts with async function calls.\n"
		"Prints KTAP; exits 0 (pass), 1 (a case failed), 4 (all skipped).\n"
		"\n"
		"  -h, --help            this text\n"
		"  -l, --list            list the cases and their safety, then exit\n"
		"  -c, --case NAME       run only this case (repeatable)\n"
		"  -t, --timeout-ms N    bound of every wait (default %d)\n"
		"      --allow-deadlock  run unsafe cases even where they deadlock\n"
		"                        the kernel for good (throw-away VMs only)\n"
		"      --expect-skip     expect this kernel to skip the sync for\n"
		"                        modules that use no async: report\n"
		"                        plain_load_skips_unrelated_async as not ok\n"
		"                        instead of skipping it where it waits\n"
		"  -m, --modules-dir DIR the test modules (default: the runner's\n"
		"                        directory + /modules)\n"
		"\n"
		"A load or async job that does not return within the timeout is a\n"
		"deadlock: the case prints its evidence (stacks, the sysrq w dump,\n"
		"kernel warnings, the wait-for cycle), then\n"
		"  not ok N <case> # TIMEOUT <seconds>s\n"
		"  # kernel wedged by <case>\n"
		"and, since every later load and unload would hang, the remaining\n"
		"cases are not run but reported as\n"
		"  ok M <name> # SKIP kernel wedged by <case>\n"
		"followed by the totals and exit status 1. Nothing is unloaded:\n"
		"reboot the machine (echo b > /proc/sysrq-trigger), then run the\n"
		"remaining cases with --case.\n",
		prog, DEFAULT_TIMEOUT_MS);
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

static bool parse_ms(const char *arg, int *value)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 3600000)
		return false;
	*value = v;
	return true;
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
	OPT_EXPECT_SKIP,
};

static const struct option options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "list", no_argument, NULL, 'l' },
	{ "case", required_argument, NULL, 'c' },
	{ "timeout-ms", required_argument, NULL, 't' },
	{ "allow-deadlock", no_argument, NULL, OPT_ALLOW_DEADLOCK },
	{ "expect-skip", no_argument, NULL, OPT_EXPECT_SKIP },
	{ "modules-dir", required_argument, NULL, 'm' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char *argv[])
{
	static struct suite suite = {
		.timeout_ms = DEFAULT_TIMEOUT_MS,
		.baseline_us = -1,
		.policy = POLICY_UNPROBED,
	};
	bool selected[ARRAY_SIZE(cases)] = { false };
	bool any_selected = false, modules_dir_set = false;
	unsigned int plan = 0;
	size_t i;
	int opt, idx;

	while ((opt = getopt_long(argc, argv, "hlc:t:m:", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'l':
			list_cases();
			return 0;
		case 'c':
			idx = case_index(optarg);
			if (idx < 0) {
				fprintf(stderr, "%s: unknown case: %s\n",
					argv[0], optarg);
				usage(stderr, argv[0]);
				return 2;
			}
			selected[idx] = true;
			any_selected = true;
			break;
		case 't':
			if (!parse_ms(optarg, &suite.timeout_ms)) {
				fprintf(stderr, "%s: bad --timeout-ms: %s\n",
					argv[0], optarg);
				usage(stderr, argv[0]);
				return 2;
			}
			break;
		case OPT_ALLOW_DEADLOCK:
			suite.allow_deadlock = true;
			break;
		case OPT_EXPECT_SKIP:
			suite.expect_skip = true;
			break;
		case 'm':
			if (strlen(optarg) >= sizeof(suite.modules_dir)) {
				fprintf(stderr, "%s: --modules-dir too long\n",
					argv[0]);
				usage(stderr, argv[0]);
				return 2;
			}
			strcpy(suite.modules_dir, optarg);
			modules_dir_set = true;
			break;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument: %s\n", argv[0],
			argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}
	if (!modules_dir_set)
		default_modules_dir(&suite, argv[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	diag_set_hook(ktap_diag);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!any_selected)
			selected[i] = true;
		plan += selected[i];
	}

	ktap_begin(plan);
	suite_check_prerequisites(&suite);
	if (!suite.skip_all[0])
		diag("modules: %s, timeout %d ms%s", suite.modules_dir,
		     suite.timeout_ms,
		     suite.allow_deadlock ? ", deadlocks allowed" : "");

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (selected[i])
			run_case(&suite, &cases[i]);

	return ktap_exit();
}
