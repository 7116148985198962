/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runner's rooms and what they share (see ../module_async.c for what
 * the suite tests and how a deadlock is reported).
 *
 *   ../module_async.c  the case table and the run: options, run_case()
 *   case.c             what every case uses: verdict(), loads, gates, jobs
 *   probe.c            the run's baseline and the kernel's policy
 *   prereq.c           prerequisites of the suite and of one case
 *   cases_*.c          the cases, by what they exercise
 *   evidence.c         the evidence of a deadlock
 *   found.c            the machine left as found, checked
 *   repeat.c           --repeat: verdicts and memory over repetitions
 *   latency.c          --latency, --storm: a load's latency against held
 *                      async jobs, and with many loads at once
 *
 * Policy lives here (which case, which verdict); the mechanisms (bounded
 * loads, knobs, the kernel log, stacks) are ../lib's.
 */
#ifndef MA_RUNNER_H
#define MA_RUNNER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "../lib/child.h"
#include "../lib/diag.h"
#include "../lib/kmsg.h"
#include "../lib/knob.h"
#include "../lib/ktap.h"
#include "../lib/module.h"
#include "../lib/state.h"
#include "../lib/sysrq.h"
#include "../lib/tasks.h"
#include "../lib/waitfor.h"

enum safety {
	SAFE,			/* safe on every kernel */
	UNSAFE_IF_ALWAYS_SYNC,	/* deadlocks where init syncs all async work */
	UNSAFE_IF_DURING_AWAITED,	/* where it syncs work queued during it */
	UNSAFE,			/* deadlocks under either policy */
};

enum policy {
	POLICY_UNPROBED,
	POLICY_UNKNOWN,
	POLICY_ALWAYS_SYNC,	/* init waits for all async work (5.17+) */
	POLICY_SKIP_IF_UNUSED,	/* only if init used async (3.8 - 5.16) */
	POLICY_NEVER_SYNC,	/* init waits for no async work at all */
	POLICY_OWN_WORK,	/* for the work queued while init ran (fixed) */
	POLICY_UNNAMED,		/* facts no name fits: they are printed */
};

/*
 * What a load waits for, each measured with a job held on a gate
 * (probe.c): the facts behind the policy's name and the cases' predictions.
 */
enum fact {
	FACT_UNMEASURED,
	FACT_UNKNOWN,		/* measuring failed */
	FACT_NO,
	FACT_YES,
	FACT_MOOT,		/* nothing to see: no sync to skip */
	FACT_ABSENT,		/* no such knob in this kernel */
};

enum fact_id {
	FACT_OWN,		/* the async work the init queued is awaited */
	FACT_WORKER,		/* async work init's worker queued is awaited */
	FACT_UNRELATED,		/* async work the module did not start is */
	FACT_OLDER,		/* ... and by a load whose init uses async */
	FACT_ASYNC_PROBE,	/* the async_probe option skips that wait */
	FACT_ASYNC_PROBE_KNOB,	/* module.async_probe=1 skips it */
	FACT_UNDONE,		/* a load returned, its init's async work undone */
	NR_FACTS,
};

/* Room for "/<module>.ko" after the modules directory in a PATH_MAX. */
#define MODULES_DIR_MAX		(PATH_MAX - MA_MODULE_NAME_LEN - 8)

/*
 * The test modules of a run, the cases' and the probe's, each once; and
 * the kernel's modules the cases load. A table naming more stops the
 * runner, saying so (module_async.c's names_add()).
 */
#define MA_TEST_MODULES_MAX	48

struct suite {
	char modules_dir[MODULES_DIR_MAX];
	int timeout_ms;
	bool allow_deadlock;
	int intrusive;		/* --intrusive: 1 yes, 0 no, -1 in a VM only */
	unsigned int repeat;	/* --repeat N, 0 without */
	unsigned int latency[8];	/* --latency N,...: jobs held */
	unsigned int nr_latency;	/* how many; 0 without */
	unsigned int storm[8];		/* --storm N,...: loads at once */
	unsigned int nr_storm;		/* how many; 0 without */
	char skip_all[256];	/* why every case skips, or "" */
	long long baseline_us;	/* slowest plain load; -1: not measured */
	int hold_ms;		/* no view of stacks: held after this long */
	bool view_known;
	enum task_view view;	/* how a load is seen held (lib/tasks.h) */
	enum policy policy;
	enum fact facts[NR_FACTS];
	/* --facts: compared with what this run measures, never taken */
	enum fact facts_claimed[NR_FACTS];
	bool facts_given;
	const char *test_modules[MA_TEST_MODULES_MAX + 1];	/* NULL-ended */
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
	long long proven_ms;		/* a deadlock proven after this long */
};

/*
 * A case's function (runner/cases_*.c), declared beside its row of the
 * table in module_async.c: a case is its row, its function, its module
 * and its expected verdicts.
 */
typedef void (case_fn)(struct case_ctx *ctx);

/*
 * A row of the case table. It names the modules its case loads: every
 * list of modules the runner uses (the prerequisite check's, the
 * cleanup's, --list-modules') is derived from the rows, none is typed out.
 */
struct ma_case {
	const char *name;
	enum safety safety;
	case_fn *run;
	const char * const *modules;	/* test modules (modules/), or NULL */
	const char * const *kernel_modules;	/* the kernel's, preferred first */
	/*
	 * What it does to the whole machine, or NULL: such a case runs by
	 * default in a virtual machine only (prereq.c, --intrusive).
	 */
	const char *intrusive;
};

/* A NULL-terminated list of module names, for a row of the table. */
#define MODULES(...)	((const char * const []){ __VA_ARGS__, NULL })

/* Where cases_request.c puts a target's async_probe option (modprobe.d(5)). */
#define MODPROBE_RUN_DIR	"/run/modprobe.d"
#define ASYNC_PROBE_CONF	MODPROBE_RUN_DIR "/module_async.conf"

/*
 * The freezer's knobs freeze_during_held_load sets (cases_freeze.c): its
 * test mode (CONFIG_PM_DEBUG), how long it tries, and the test's delay.
 */
#define PM_TEST			"/sys/power/pm_test"
#define PM_FREEZE_TIMEOUT	"/sys/power/pm_freeze_timeout"
#define PM_TEST_DELAY		"/sys/module/suspend/parameters/pm_test_delay"

/*
 * Undo what a case did to give a module async_probe (cases_request.c);
 * async-signal-safe: the signal handler calls it if the run is interrupted.
 */
void async_probe_restore(void);
/* module.async_probe's value to restore, "" when nothing changed it. */
extern char saved_async_probe[16];
/* Put back the freezer's knobs as found (cases_freeze.c); likewise safe. */
void freeze_knobs_restore(void);

static inline double ms(long long us)
{
	return us / 1000.0;
}

/* case.c */
void verdict(struct case_ctx *ctx, enum ktap_kind kind, const char *fmt, ...)
	__printf(3, 4);
bool timed_out(const struct case_ctx *ctx);
bool verdict_given(const struct case_ctx *ctx);
void fail_load(struct case_ctx *ctx, const char *module, int ret);
int module_path(const struct suite *s, const char *module, char *buf,
		size_t len);
int gate_ms(const struct suite *s);
int test_module_load(struct suite *s, const char *module, const char *params);

/* A test module's load in a child, with what it points to. */
struct test_load {
	struct module_load load;
	const char *module;
	char path[PATH_MAX];
	char params[256];
};

int test_load_start(struct suite *s, struct test_load *t, const char *module,
		    const char *params);
bool test_load_back(struct case_ctx *ctx, struct test_load *t,
		    const char *since);
int gate_open(const char *module);
int job_start(const char *module);
int job_wait_done(struct suite *s, const char *module);
bool gate_job_held(struct case_ctx *ctx);
int job_wait_done_or_cycle(struct case_ctx *ctx, const char *module,
			   long *done);
void verdict_stuck(struct case_ctx *ctx, int ret, const char *what);

/* Where do_init_module() waits for async work, on every generation. */
#define SYNC_FUNCTIONS		"async_synchronize_*"

/* A load seen blocked in async_synchronize_*, returned, or neither. */
enum load_hold {
	LOAD_HELD,
	LOAD_RETURNED,
	LOAD_RUNNING,
};

int suite_view(struct suite *s);
enum load_hold load_wait_held(struct suite *s, struct module_load *load,
			      int bound_ms);
void log_knobs(const char *module);
void log_module_state(const char *name);

/* probe.c: a load of ma_plain next to ma_gate's job held on its gate. */
struct held_load {
	bool held;		/* still running when the gate opened */
	bool stuck;		/* did not return after the gate opened */
	long long load_us;	/* start of the load to its return */
	long long after_open_us;	/* gate opening to the load's return */
	int result;		/* the load's outcome */
	long jobs_held;		/* jobs waiting on the gate as the load began */
	long own_done;		/* its own job's "done" at its return; -1: none */
};

/* What the baseline and the policy probe load, besides the cases. */
extern const char * const probe_modules[];

int plain_load(struct suite *s, long long *us);
int suite_baseline(struct suite *s);
void suite_warm_up(struct suite *s);
int load_beside_held_job(struct suite *s, const char *module,
			 const char *params, struct held_load *h);
int load_beside_held_jobs(struct suite *s, const char *module,
			  const char *params, unsigned int jobs,
			  struct held_load *h);
bool held_by_own_job(struct suite *s, const char *module,
		     struct module_load *load);
void suite_probe_policy(struct case_ctx *ctx);
int facts_parse(struct suite *s, const char *arg);
void fact_set(struct suite *s, enum fact_id id, enum fact value);
void fact_undone_seen(struct suite *s, bool undone);
bool would_deadlock(const struct suite *s, enum safety safety);
bool skip_if_waits_for_all(struct case_ctx *ctx);
enum fact policy_awaits_during_init(const struct suite *s);

/*
 * prereq.c. A missing prerequisite of the whole suite is reported in one
 * of two forms: the runner's own, a plan with every case
 * "ok N <case> # SKIP <reason>"; or, where module_async.sh runs the
 * runner, kselftest's whole-suite SKIP, "1..0 # SKIP <reason>" (see
 * WHOLE_SUITE_SKIP_ENV in ../module_async.c).
 */
enum skip_form {
	SKIP_EACH_CASE,
	SKIP_WHOLE_SUITE,
};

/* Why the suite cannot run here, in s->skip_all ("" if it can). */
void suite_check_prerequisites(struct suite *s, enum skip_form form);
bool skip_if_unsafe(struct case_ctx *ctx);
void suite_intrusive(struct suite *s);
bool skip_if_intrusive(struct case_ctx *ctx);
bool skip_if_warn_panics(struct case_ctx *ctx);
const char *why_not_loadable(const struct case_ctx *ctx, const char *target,
			     char *buf, size_t len);
bool skip_unless_loadable(struct case_ctx *ctx, const char *target);

/* Two looks this far apart see the same wedge, or none (case.c, evidence.c). */
#define CYCLE_CONFIRM_MS	100

/* evidence.c */
void case_log(struct case_ctx *ctx);
void deadlock_evidence(struct case_ctx *ctx);
bool wedge_seen(char *seen, size_t len);

/*
 * found.c: the state saved before the run and before each case; a case
 * that changed it fails; the run's check is false if the run changed it.
 */
void found_run_begin(struct suite *s, const char * const kernel_modules[]);
void found_case_begin(void);
void found_case_check(struct case_ctx *ctx);
bool found_run_check(void);
int found_save(struct ma_state *st);
int found_diff(const struct ma_state *before, char *diff, size_t len);

/* repeat.c: repetition @k (1 to s->repeat) of the cases. */
const char *repeat_name(const struct suite *s, const char *name,
			unsigned int k, char *buf, size_t len);
void repeat_begin(const struct suite *s, unsigned int k);
void repeat_done(const struct suite *s, unsigned int k);
void repeat_compare(struct case_ctx *ctx, size_t idx, unsigned int k);
void repeat_end(const struct suite *s);

/*
 * latency.c; the most jobs, modules/ma_job.h's MA_JOBS_MAX; the most loads
 * at once, modules/Makefile's MA_STORM_NR at most.
 */
#define LATENCY_JOBS_MAX	1000
#define STORM_LOADS_MAX		64
#define LATENCY_CASE		"latency"

int jobs_settle(struct suite *s, const char *module, unsigned int jobs,
		long *held);
bool counts_parse(const char *arg, unsigned int max, unsigned int *list,
		  unsigned int *nr, size_t size);
void latency_run(struct case_ctx *ctx);

/* cases_init.c: a load whose init leads to a held job (FACT_OWN, _WORKER). */
void init_wait(struct case_ctx *ctx, enum fact_id id);

#endif /* MA_RUNNER_H */
