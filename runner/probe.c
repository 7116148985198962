// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's policy, from facts: which async work do_init_module() waits
 * for (the module's own, its init's worker's, unrelated work) and whether
 * async_probe skips that wait, each measured with safe loads and a job
 * held on a gate. Also the run's baseline (how long a plain load takes
 * here, now), the fallback where a held load cannot be seen.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/*
 * Where the kernel shows no stacks (see suite_view()), a load still running
 * this long after it started counts as "held": a multiple of the slowest of
 * a few plain loads measured in this run, with a floor against a coarse
 * clock. A held load never returns by itself, so the factor only has to
 * cover a plain load's jitter.
 */
#define BASELINE_LOADS		3
#define HOLD_FACTOR		10
#define HOLD_FLOOR_MS		100

const char * const probe_modules[] = {
	"ma_gate", "ma_plain", "ma_async_init", "ma_worker_async", NULL,
};

/* One load and unload of ma_plain, none held: its load's time in @us. */
int plain_load(struct suite *s, long long *us)
{
	struct module_load load = { .params = "" };
	char path[PATH_MAX];
	int ret;

	module_path(s, "ma_plain", path, sizeof(path));
	load.path = path;
	ret = module_load_start(&load);
	if (ret)
		return ret;
	if (module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
		child_describe(&load.child, "plain load of ma_plain");
		return -ETIMEDOUT;
	}
	ret = module_load_result(&load);
	if (ret)
		return ret;
	*us = child_elapsed_us(&load.child);
	return module_unload("ma_plain", s->timeout_ms);
}

/*
 * How long a plain load takes here, now: the slowest of a few loads and
 * unloads of ma_plain. Everything "too long" in this run derives from it.
 */
int suite_baseline(struct suite *s)
{
	long long us, slowest = 0;
	int i, ret;

	if (s->baseline_us >= 0)
		return 0;

	for (i = 0; i < BASELINE_LOADS; i++) {
		ret = plain_load(s, &us);
		if (ret)
			return ret;
		if (us > slowest)
			slowest = us;
	}
	s->baseline_us = slowest;
	s->hold_ms = HOLD_FACTOR * (slowest + 999) / 1000;
	if (s->hold_ms < HOLD_FLOOR_MS)
		s->hold_ms = HOLD_FLOOR_MS;
	diag("baseline: a plain load takes %.1f ms (slowest of %d)",
	     ms(slowest), BASELINE_LOADS);
	return 0;
}

/*
 * A boot's first load of an out-of-tree module taints the kernel and says
 * so in two console lines, with other work done once: 15 ms under TCG on
 * stock 6.1. One plain load before the first case puts that on the run's
 * set-up, not on that case's time; the baseline's loads do it where there
 * is one. A load that fails here fails again in the case that needs it.
 */
void suite_warm_up(struct suite *s)
{
	long long us;

	if (s->baseline_us >= 0 || plain_load(s, &us))
		return;
	diag("set-up: ma_plain loaded and unloaded, the load in %.1f ms",
	     ms(us));
}

/*
 * A load whose init queued a job of its own (ma_async_init, its gate still
 * closed), seen waiting: for that job only, or for older work too (ma_gate's
 * job)? Open its gate: the load returns, or its job ends, wakes it (kernel/
 * async.c wakes every waiter when an entry is done) and it goes back to
 * sleep in the sync, a sleep more than before the gate opened. True if it
 * was held by its own job only. Where the sleeps or stacks cannot be read,
 * a load still running HELD_CONFIRM_MS after its job is done is held (a
 * wake-up's time, under TCG too).
 */
#define HELD_CONFIRM_MS		50

bool held_by_own_job(struct suite *s, const char *module,
		     struct module_load *load)
{
	long long deadline = now_us() + s->timeout_ms * 1000LL;
	long before, sleeps, done = 0;
	pid_t pid = load->child.pid;

	if (!knob_exists(module, "open"))
		return false;
	if (s->view == TASK_VIEW_NONE || task_sleeps(pid, &before)) {
		gate_open(module);
		if (job_wait_done(s, module))
			return false;
		return module_load_wait(load, HELD_CONFIRM_MS) != CHILD_RUNNING;
	}
	gate_open(module);
	for (;;) {
		if (module_load_wait(load, KNOB_POLL_STEP_MS) != CHILD_RUNNING)
			return true;
		if (!knob_read_long(module, "done", &done) && done == 1 &&
		    !task_sleeps(pid, &sleeps) && sleeps > before &&
		    task_waits_in(pid, SYNC_FUNCTIONS, s->view) == 1)
			return false;
		if (now_us() >= deadline)
			return false;
	}
}

/*
 * While the policy probe measures, ma_gate stays loaded from one
 * measurement to the next (gate_keep) and its "start" holds jobs again: a
 * load and an unload fewer each. gate_kept: it is loaded, its jobs done.
 */
static bool gate_keep, gate_kept;

/*
 * Hold an unrelated async job (ma_gate's; @jobs of them, settled: see
 * jobs_settle()), load @module (ma_plain, or ma_async_init: see
 * held_by_own_job()) with @params and see whether the load returns while the job is
 * held. Then open the gate: a held load must now return (the causality
 * check). Unloads both modules (ma_gate not while the probe keeps it).
 * Returns 0 if it could measure, -errno (with a diagnostic) if not.
 */
int load_beside_held_jobs(struct suite *s, const char *module,
			  const char *params, unsigned int jobs,
			  struct held_load *h)
{
	struct module_load load = { .params = params, .knob_after = "done" };
	char path[PATH_MAX], gate_params[32];
	long long opened;
	int ret;

	memset(h, 0, sizeof(*h));
	h->own_done = -1;
	ret = suite_view(s);
	if (ret) {
		diag("cannot measure a baseline: %s", strerror(-ret));
		h->stuck = ret == -ETIMEDOUT;
		return ret;
	}
	snprintf(gate_params, sizeof(gate_params), "jobs=%u", jobs);
	ret = gate_kept ? 0 : test_module_load(s, "ma_gate", gate_params);
	gate_kept = false;
	h->stuck = ret == -ETIMEDOUT;
	if (!ret)
		ret = job_start("ma_gate");
	if (!ret)
		ret = jobs_settle(s, "ma_gate", jobs, &h->jobs_held);
	if (ret) {
		diag("cannot hold an async job with ma_gate: %s",
		     strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}

	module_path(s, module, path, sizeof(path));
	load.path = path;
	ret = module_load_start(&load);
	if (ret) {
		diag("cannot start loading %s: %s", module, strerror(-ret));
		gate_open("ma_gate");
		return ret;
	}
	h->held = load_wait_held(s, &load, s->timeout_ms) != LOAD_RETURNED;
	if (h->held && held_by_own_job(s, module, &load))
		h->held = false;
	/* Its own job, if any, must end before @module can be unloaded. */
	if (knob_exists(module, "open") && !gate_open(module))
		job_wait_done(s, module);

	opened = now_us();
	gate_open("ma_gate");
	if (h->held && module_load_wait(&load, s->timeout_ms) == CHILD_RUNNING) {
		h->stuck = true;
		child_describe(&load.child, "load beside the held job");
		h->result = -ETIMEDOUT;
		return 0;
	}
	h->result = module_load_result(&load);
	h->load_us = child_elapsed_us(&load.child);
	/* The moment it returned: was its own job, if it has one, done? */
	if (!h->result && load.child.report.has_value)
		h->own_done = load.child.report.value;
	if (h->held)
		h->after_open_us = load.child.report.end_us - opened;
	diag("%s%s%s: load took %.1f ms, %s", module,
	     params && *params ? " with " : "", params ? params : "",
	     ms(h->load_us),
	     h->held ? "held until the unrelated job's gate opened" :
		       "while an unrelated async job was held");
	if (h->own_done >= 0)
		diag("its own async job %s at its return",
		     h->own_done == 1 ? "done" : "not done");
	if (h->held)
		diag("it returned %.1f ms after the gate opened",
		     ms(h->after_open_us));

	/* @module's unload would wait for ma_gate's jobs too. */
	if (job_wait_done(s, "ma_gate"))
		log_knobs("ma_gate");
	module_unload(module, s->timeout_ms);
	if (gate_keep)
		gate_kept = true;
	else
		module_unload("ma_gate", s->timeout_ms);
	return 0;
}

int load_beside_held_job(struct suite *s, const char *module,
			 const char *params, struct held_load *h)
{
	return load_beside_held_jobs(s, module, params, 1, h);
}

static const char * const fact_names[NR_FACTS] = {
	[FACT_OWN] = "own",
	[FACT_WORKER] = "worker",
	[FACT_UNRELATED] = "unrelated",
	[FACT_OLDER] = "older",
	[FACT_ASYNC_PROBE] = "async_probe",
	[FACT_ASYNC_PROBE_KNOB] = "async_probe_knob",
	[FACT_UNDONE] = "undone",
};

static const char *fact_value(enum fact value)
{
	switch (value) {
	case FACT_NO:
		return "no";
	case FACT_YES:
		return "yes";
	case FACT_MOOT:
		return "moot";
	case FACT_ABSENT:
		return "absent";
	case FACT_UNMEASURED:
	case FACT_UNKNOWN:
	default:
		return "unknown";
	}
}

/*
 * Facts given as the "# facts:" line prints them (--facts, from an earlier
 * boot of the same kernel), each "name=value", comma-separated: the probe
 * measures them all the same and says where they differ (facts_compare()).
 * "unknown" is no value to give. 0, or -EINVAL (nothing set) if @arg is
 * not such a list.
 */
int facts_parse(struct suite *s, const char *arg)
{
	static const enum fact values[] = {
		FACT_NO, FACT_YES, FACT_MOOT, FACT_ABSENT,
	};
	enum fact parsed[NR_FACTS] = { FACT_UNMEASURED };
	const char *p = arg;
	size_t id, v, n;

	do {
		for (id = 0; id < NR_FACTS; id++) {
			n = strlen(fact_names[id]);
			if (!strncmp(p, fact_names[id], n) && p[n] == '=')
				break;
		}
		if (id == NR_FACTS)
			return -EINVAL;
		p += n + 1;
		for (v = 0; v < ARRAY_SIZE(values); v++) {
			n = strlen(fact_value(values[v]));
			if (!strncmp(p, fact_value(values[v]), n) &&
			    (p[n] == ',' || !p[n]))
				break;
		}
		if (v == ARRAY_SIZE(values))
			return -EINVAL;
		parsed[id] = values[v];
		p += n;
	} while (*p++ == ',');
	memcpy(s->facts_claimed, parsed, sizeof(parsed));
	s->facts_given = true;
	return 0;
}

/*
 * --facts against this run's: a fact given is never taken for one
 * measured (made up, or from a boot of another kernel, it would name a
 * policy this kernel does not have and pass cases it fails). Where they
 * differ, say so; the measured ones stand.
 */
static void facts_compare(const struct suite *s)
{
	char line[256];
	size_t i, n = 0;

	for (i = 0; i < NR_FACTS; i++) {
		if (s->facts_claimed[i] == FACT_UNMEASURED ||
		    s->facts_claimed[i] == s->facts[i])
			continue;
		n += snprintf(line + n, sizeof(line) - n, "%s%s=%s, measured %s",
			      n ? "; " : "", fact_names[i],
			      fact_value(s->facts_claimed[i]),
			      fact_value(s->facts[i]));
		if (n >= sizeof(line))
			break;
	}
	if (n)
		diag("--facts differ from this boot's, which stand: %s", line);
	else
		diag("--facts as measured in this boot");
}

/* A case that measured a fact records it: the probe need not again. */
void fact_set(struct suite *s, enum fact_id id, enum fact value)
{
	s->facts[id] = value;
}

/*
 * A load whose init queued async work returned, that work done (@undone
 * false) or not: fact undone is yes once any such load returned with it
 * undone, whatever else was measured; no while every one had it done.
 */
void fact_undone_seen(struct suite *s, bool undone)
{
	if (undone)
		s->facts[FACT_UNDONE] = FACT_YES;
	else if (s->facts[FACT_UNDONE] != FACT_YES)
		s->facts[FACT_UNDONE] = FACT_NO;
}

/*
 * Facts that cannot all be true: loads wait for their init's own async work
 * (own=yes), yet one returned with it undone (undone=yes, measured beside
 * an older job: a wait that took the older job for its own work). Such a
 * kernel gets no policy's name, and no unsafe case runs on it.
 */
static bool facts_contradict(const struct suite *s)
{
	return s->facts[FACT_OWN] == FACT_YES &&
	       s->facts[FACT_UNDONE] == FACT_YES;
}

/*
 * The policies with a name: what a load waits for in each (the facts
 * own, worker, unrelated, older, undone), and whether it waits for async
 * work an unrelated task queues while the init runs ("during", an init
 * without async of its own: case unrelated_async_during_init).
 */
static const struct {
	enum policy policy;
	const char *name;
	enum fact own, worker, unrelated, older, undone, during;
} policies[] = {
	/* 5.17 and later, and before 3.8: all async work */
	{ POLICY_ALWAYS_SYNC, "always-sync",
	  FACT_YES, FACT_YES, FACT_YES, FACT_YES, FACT_NO, FACT_YES },
	/* 3.8 to 5.16: all of it if the loading task used async (the flag) */
	{ POLICY_SKIP_IF_UNUSED, "skip-if-unused",
	  FACT_YES, FACT_NO, FACT_NO, FACT_YES, FACT_NO, FACT_NO },
	/* no sync in do_init_module() at all */
	{ POLICY_NEVER_SYNC, "never-sync",
	  FACT_NO, FACT_NO, FACT_NO, FACT_NO, FACT_YES, FACT_NO },
	/*
	 * The work queued from just before the init to its return, by any
	 * task (tools/kernel/patches/fixed/): none queued before the load.
	 */
	{ POLICY_OWN_WORK, "own-work",
	  FACT_YES, FACT_YES, FACT_NO, FACT_NO, FACT_NO, FACT_YES },
};

/* Is @module's load, with @params, beside a held job held? */
static enum fact unrelated_awaited(struct case_ctx *ctx, const char *module,
				   const char *params)
{
	struct held_load h;

	if (load_beside_held_job(ctx->suite, module, params, &h) || h.result ||
	    h.stuck) {
		if (h.stuck)
			verdict(ctx, KTAP_WEDGED,
				"the policy probe's load did not return within %d ms",
				ctx->suite->timeout_ms);
		return FACT_UNKNOWN;
	}
	if (h.own_done >= 0)
		fact_undone_seen(ctx->suite, h.own_done != 1);
	return h.held ? FACT_YES : FACT_NO;
}

/* Does module.async_probe=1 skip the wait for unrelated async work? */
static enum fact knob_honoured(struct case_ctx *ctx)
{
	char saved[sizeof(saved_async_probe)];
	enum fact awaited;

	if (knob_read("module", "async_probe", saved, sizeof(saved)))
		return FACT_ABSENT;
	snprintf(saved_async_probe, sizeof(saved_async_probe), "%s", saved);
	if (knob_write("module", "async_probe", "1")) {
		saved_async_probe[0] = '\0';
		return FACT_UNKNOWN;
	}
	awaited = unrelated_awaited(ctx, "ma_plain", NULL);
	if (!knob_write("module", "async_probe", saved))
		saved_async_probe[0] = '\0';
	else
		diag("cannot restore module.async_probe to %s", saved);
	if (awaited == FACT_UNKNOWN)
		return awaited;
	return awaited == FACT_NO ? FACT_YES : FACT_NO;
}

/* Measure fact @id unless known; a wedge is the case's verdict. */
static void measure(struct case_ctx *ctx, enum fact_id id)
{
	struct suite *s = ctx->suite;
	struct ktap_verdict saved;
	enum fact awaited;

	if (s->facts[id] != FACT_UNMEASURED || ktap_wedged_by())
		return;
	s->facts[id] = FACT_UNKNOWN;
	switch (id) {
	case FACT_OWN:
	case FACT_WORKER:
		/*
		 * The case's own measure, under a verdict of its own: the
		 * case's is kept unless the measure wedged the kernel.
		 */
		saved = ctx->verdict;
		ctx->verdict.kind = KTAP_PASS;
		init_wait(ctx, id);
		if (ctx->verdict.kind != KTAP_WEDGED) {
			ctx->verdict = saved;
			module_unload(id == FACT_OWN ? "ma_async_init" :
				      "ma_worker_async", s->timeout_ms);
		}
		break;
	case FACT_UNRELATED:
		s->facts[id] = unrelated_awaited(ctx, "ma_plain", NULL);
		break;
	case FACT_OLDER:
		/* Held past its own job's end: by ma_gate's. */
		s->facts[id] = unrelated_awaited(ctx, "ma_async_init", NULL);
		break;
	case FACT_UNDONE:
		/*
		 * Seen by every load whose own job's "done" is read at its
		 * return (the measure of older, async_init_completes):
		 * measured here only if none did.
		 */
		unrelated_awaited(ctx, "ma_async_init", NULL);
		break;
	case FACT_ASYNC_PROBE:
	case FACT_ASYNC_PROBE_KNOB:
		/* Where nothing unrelated is awaited there is nothing to skip. */
		if (s->facts[FACT_UNRELATED] != FACT_YES) {
			s->facts[id] = FACT_MOOT;
		} else if (id == FACT_ASYNC_PROBE) {
			awaited = unrelated_awaited(ctx, "ma_plain",
						    "async_probe=1");
			s->facts[id] = awaited == FACT_UNKNOWN ? awaited :
				       awaited == FACT_NO ? FACT_YES : FACT_NO;
		} else {
			s->facts[id] = knob_honoured(ctx);
		}
		break;
	default:
		break;
	}
}

/*
 * The policy, from the facts: the first name whose facts they are, else
 * "unknown" if one could not be measured, else the facts themselves. The
 * probe is safe on every kernel: every job it holds is released by its
 * gate. It runs in the first case that needs it; if a load does not come
 * back, that case wedged the kernel.
 */
void suite_probe_policy(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;
	const enum fact *f = s->facts;
	char line[256];
	size_t i, n = 0;

	if (s->policy != POLICY_UNPROBED)
		return;
	s->policy = POLICY_UNKNOWN;
	gate_keep = true;
	for (i = 0; i < NR_FACTS; i++)
		measure(ctx, i);
	gate_keep = false;
	if (gate_kept && !ktap_wedged_by())
		module_unload("ma_gate", s->timeout_ms);
	gate_kept = false;
	for (i = 0; i < NR_FACTS; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%s=%s",
			      i ? "," : "", fact_names[i], fact_value(f[i]));
	diag("facts: %s", line);
	if (s->facts_given)
		facts_compare(s);
	for (i = 0; i < NR_FACTS; i++)
		if (f[i] == FACT_UNKNOWN)
			break;
	if (i < NR_FACTS) {
		diag("policy: unknown");
		return;
	}
	if (facts_contradict(s))
		diag("facts contradict: own=yes, undone=yes: no policy named, no unsafe case run");
	for (i = 0; i < ARRAY_SIZE(policies); i++) {
		if (f[FACT_OWN] == policies[i].own &&
		    f[FACT_WORKER] == policies[i].worker &&
		    f[FACT_UNRELATED] == policies[i].unrelated &&
		    f[FACT_OLDER] == policies[i].older &&
		    f[FACT_UNDONE] == policies[i].undone) {
			s->policy = policies[i].policy;
			diag("policy: %s", policies[i].name);
			return;
		}
	}
	s->policy = POLICY_UNNAMED;
	diag("policy: %s", line);
}

/*
 * Would a case of @safety deadlock here, by the facts? A request from an
 * async job (UNSAFE_IF_ALWAYS_SYNC) does where a load waits for async work
 * it did not start; the nested one (UNSAFE), whose module's init uses
 * async, also where such a load waits for work queued before it began
 * (older: the job loading it). A request for a module from a job queued
 * while that module's init runs (UNSAFE_IF_DURING_AWAITED) does where the
 * load waits for such work (the named policy's "during"). An unknown fact
 * is a yes; so are facts that contradict each other.
 */
bool would_deadlock(const struct suite *s, enum safety safety)
{
	if (safety == SAFE)
		return false;
	if (facts_contradict(s))
		return true;
	if (safety == UNSAFE_IF_DURING_AWAITED)
		return policy_awaits_during_init(s) != FACT_NO;
	if (s->facts[FACT_UNRELATED] != FACT_NO)
		return true;
	return safety == UNSAFE && s->facts[FACT_OLDER] != FACT_NO;
}

/*
 * Where a load whose init uses async waits for work it did not queue
 * (unrelated or older), loads at once cannot each wait for their own
 * alone: a case that holds several skips, saying so. True if it skipped.
 */
bool skip_if_waits_for_all(struct case_ctx *ctx)
{
	const struct suite *s = ctx->suite;

	if (s->facts[FACT_UNRELATED] != FACT_YES &&
	    s->facts[FACT_OLDER] != FACT_YES)
		return false;
	verdict(ctx, KTAP_SKIP,
		"this kernel waits for all async work after an init that uses async");
	return true;
}

/*
 * Does a load here wait for async work an unrelated task queues while its
 * init (which uses no async) runs? What the named policy says; FACT_UNKNOWN
 * where the policy has no name.
 */
enum fact policy_awaits_during_init(const struct suite *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(policies); i++)
		if (policies[i].policy == s->policy)
			return policies[i].during;
	return FACT_UNKNOWN;
}
