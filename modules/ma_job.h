/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The async job of a module_async test module, and its knobs.
 *
 * Every test module but ma_plain and ma_fail runs at most one async job per
 * load (ma_gate as many as "jobs" says, all alike, one gate for all;
 * ma_chained a chain of two, the first held on a gate of its own), and the
 * runner (tools/testing/selftests/module_async/module_async.c) drives and
 * observes it through module parameters under
 * /sys/module/<module>/parameters/. A knob has one name, type, mode and
 * meaning in every module, and is declared with its MA_KNOB_*() below:
 *
 *   gate_ms    (uint, 0444, set at load) bound in ms of every wait in the
 *              module: the job's on the gate, init's, exit's (default 30000)
 *   jobs       (uint, 0444, set at load) how many jobs "start" queues: 1 to
 *              MA_JOBS_MAX (default 1)
 *   start      (write 1, 0644) queue the job, for modules whose init does not;
 *              again once it is done, with the gate closed and the knobs
 *              below as at load
 *   open       (write 1, 0644) open the gate: a job held on it proceeds
 *   open_first (write 1, 0644) open only the first gate: a chain's first
 *              job's, which then queues the next job, held on the gate
 *              (ma_chained), or the init's (ma_storm_<N>); "open" opens both
 *   started    (int, 0444) 1 once the job runs (and, if gated, waits on it)
 *   held       (int, 0444) how many jobs wait on a gate now (ma_storm_<N>'s
 *              init too)
 *   chained    (int, 0444) 1 once a job that another job queued runs
 *   done       (int, 0444) 1 once the job (every job, the chained ones
 *              too) has finished
 *   timed_out  (int, 0444) 1 if gate_ms expired before the gate was opened
 *   result     (int, 0444) what the job's work returned (0 or -errno)
 *
 * A module declares the knobs its job uses, one MA_KNOB_*() a knob, and
 * defines the job as ma_job_fn(): ma_job_begin(), its work, ma_job_end().
 * The job's inputs, named for what they are (target, disk), are strings the
 * module declares itself with module_param_string() (0644); the job reads
 * them with ma_knob_copy().
 *
 * No wait is unbounded. A held job waits on the gate with
 * wait_for_completion_timeout(), so a runner that dies cannot leave a job
 * behind for longer than gate_ms from its start. Of many jobs, only as many
 * as the async workqueue runs at once wait on the gate (system_unbound_wq's
 * max_active, 512, in 5.10 and 6.1; the "async" workqueue's 256 from 6.9:
 * kernel/async.c); the rest are pending in the workqueue, and each waits
 * its gate_ms once it runs. Each job holds a reference on its module
 * from queueing until its last statement: delete_module() refuses (EBUSY)
 * while a job runs, instead of freeing the code under it, and a job that
 * never ends (a deadlocked request_module()) leaves a module that cannot be
 * unloaded rather than a crash. The job's return from its last statement is
 * covered by delete_module() itself, which calls async_synchronize_full()
 * after the module's exit and before freeing the module. Every module's
 * exit is ma_job_exit(); a module whose job is queued by "start" needs no
 * init.
 *
 * This header is included by exactly one .c file per module: everything in
 * it is static to that module.
 */
#ifndef _MA_JOB_H
#define _MA_JOB_H

#include <linux/async.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

/* The gate's default safety timeout; the runner passes its own at load. */
#define MA_GATE_MS_DEFAULT	30000

/* Most jobs "jobs" takes: each is an async entry and, while held, a worker. */
#define MA_JOBS_MAX		1000

struct ma_job {
	struct completion gate;		/* opened by "open" or module exit */
	struct completion first;	/* a chain's first job's: "open_first" */
	struct completion finished;	/* the job's last statement ran */
	unsigned int gate_ms;		/* bound of the wait on the gate */
	unsigned int jobs;		/* how many ma_job_queue() queues */
	atomic_t left;			/* queued jobs not yet finished */
	atomic_t held;			/* jobs waiting on the gate now */
	bool queued;			/* queued in this load (one shot) */
	int started;
	int chained;
	int done;
	int timed_out;
	int result;
};

/* The job itself: each module that includes this header defines it. */
static void ma_job_fn(void *data, async_cookie_t cookie);

static struct ma_job ma_job = {
	.gate = COMPLETION_INITIALIZER(ma_job.gate),
	.first = COMPLETION_INITIALIZER(ma_job.first),
	.finished = COMPLETION_INITIALIZER(ma_job.finished),
	.gate_ms = MA_GATE_MS_DEFAULT,
	.jobs = 1,
};

/*
 * Queue the job ("jobs" of them); the caller is init, a worker or the
 * "start" knob. Each holds a reference on the module until its end.
 */
static inline void ma_job_queue(void)
{
	unsigned int i;

	atomic_set(&ma_job.left, ma_job.jobs);
	ma_job.queued = true;
	for (i = 0; i < ma_job.jobs; i++) {
		__module_get(THIS_MODULE);
		async_schedule(ma_job_fn, &ma_job);
	}
}

/*
 * Queue one more job from a running job, with @data: counted among the jobs
 * left, so that "done" waits for it too (a chain: ma_chained).
 */
static inline void ma_job_queue_next(void *data)
{
	atomic_inc(&ma_job.left);
	__module_get(THIS_MODULE);
	async_schedule(ma_job_fn, data);
}

static DECLARE_COMPLETION(ma_worker_queued);

/* A worker's queueing of the job: see ma_job_queue_by_worker(). */
static void ma_worker_fn(struct work_struct *work)
{
	ma_job_queue();
	complete(&ma_worker_queued);
}

static __maybe_unused DECLARE_WORK(ma_worker, ma_worker_fn);

/*
 * Have a worker of @wq queue the job, so that the loading task does not,
 * and wait, bounded by gate_ms, until it has: 0, or -ETIMEDOUT if the
 * worker never ran (taken back).
 */
static inline int ma_job_queue_by_worker(struct workqueue_struct *wq)
{
	queue_work(wq, &ma_worker);
	if (!wait_for_completion_timeout(&ma_worker_queued,
					 msecs_to_jiffies(ma_job.gate_ms)) &&
	    cancel_work_sync(&ma_worker))
		return -ETIMEDOUT;
	/* The worker is past its last statement; let it return. */
	flush_work(&ma_worker);
	return 0;
}

/* First statement of every job. */
static inline void ma_job_begin(void)
{
	WRITE_ONCE(ma_job.started, 1);
}

/* Hold the job until @gate opens or gate_ms expires. */
static inline void ma_job_hold_on(struct completion *gate)
{
	unsigned long left;

	atomic_inc(&ma_job.held);
	left = wait_for_completion_timeout(gate,
					   msecs_to_jiffies(ma_job.gate_ms));
	atomic_dec(&ma_job.held);
	if (!left) {
		WRITE_ONCE(ma_job.timed_out, 1);
		pr_warn("%s: gate not opened within %u ms, job released\n",
			THIS_MODULE->name, ma_job.gate_ms);
	}
}

static inline void ma_job_hold(void)
{
	ma_job_hold_on(&ma_job.gate);
}

/*
 * Last statement of every job: publish result; the last job to end, done,
 * then let go.
 */
static inline void ma_job_end(int result)
{
	WRITE_ONCE(ma_job.result, result);
	if (atomic_dec_and_test(&ma_job.left)) {
		complete(&ma_job.finished);
		/* Whoever reads done == 1 finds the result and finished too. */
		smp_store_release(&ma_job.done, 1);
	}
	module_put(THIS_MODULE);
}

/* Every gate: a chain's first job's, and the gate. */
static inline void ma_gate_open(void)
{
	complete_all(&ma_job.first);
	complete_all(&ma_job.gate);
}

/*
 * The exit of every module that includes this header: open the gate and
 * wait, bounded, for the queued jobs' last. The job's module reference keeps
 * delete_module() from getting here while the job runs, so the wait
 * normally returns at once; it is a second line of defence, not a
 * synchronisation the module relies on.
 */
static void __exit ma_job_exit(void)
{
	ma_gate_open();
	if (ma_job.queued &&
	    !wait_for_completion_timeout(&ma_job.finished,
					 msecs_to_jiffies(ma_job.gate_ms)))
		pr_err("%s: job still running at exit\n", THIS_MODULE->name);
}

/*
 * Copy the string knob @knob for the job, under the module's parameter
 * lock: a write to the knob must not change it under the job's feet.
 */
static inline void ma_knob_copy(char *dst, const char *knob, size_t size)
{
	kernel_param_lock(THIS_MODULE);
	strscpy(dst, knob, size);
	kernel_param_unlock(THIS_MODULE);
}

/*
 * A write to "start" or "open": 0 for a true value, -EINVAL for a false one
 * (what they did cannot be undone), or why the value is no boolean.
 */
static inline int ma_knob_parse_1(const char *val)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	return on ? 0 : -EINVAL;
}

/* "open": writing a true value opens the gate; reading shows if open. */
static inline int ma_open_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	ret = ma_knob_parse_1(val);
	if (ret)
		return ret;
	ma_gate_open();
	return 0;
}

static inline int ma_open_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", completion_done(&ma_job.gate));
}

static const struct kernel_param_ops ma_open_ops __maybe_unused = {
	.set = ma_open_set,
	.get = ma_open_get,
};

/* "open_first": as "open", for a chain's first job's gate only. */
static inline int ma_open_first_set(const char *val,
				    const struct kernel_param *kp)
{
	int ret;

	ret = ma_knob_parse_1(val);
	if (ret)
		return ret;
	complete_all(&ma_job.first);
	return 0;
}

static inline int ma_open_first_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", completion_done(&ma_job.first));
}

static const struct kernel_param_ops ma_open_first_ops __maybe_unused = {
	.set = ma_open_first_set,
	.get = ma_open_first_get,
};

/*
 * "start": writing a true value queues the job; once it is done, again,
 * with a closed gate and the knobs as at load (the runner holds jobs again
 * without a new load). Refused while the job runs, and while the module is
 * still loading (a "start=1" in the load's parameter string): the loading
 * task must not be the one that queues the job, or its own
 * do_init_module() would wait for it. Knob writes are serialised by the
 * module's parameter lock (param_attr_store()).
 */
static inline int ma_start_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	ret = ma_knob_parse_1(val);
	if (ret)
		return ret;
	if (THIS_MODULE->state != MODULE_STATE_LIVE ||
	    (ma_job.queued && !completion_done(&ma_job.finished)))
		return -EBUSY;
	if (ma_job.queued) {
		reinit_completion(&ma_job.gate);
		reinit_completion(&ma_job.first);
		reinit_completion(&ma_job.finished);
		WRITE_ONCE(ma_job.started, 0);
		WRITE_ONCE(ma_job.chained, 0);
		WRITE_ONCE(ma_job.done, 0);
		WRITE_ONCE(ma_job.timed_out, 0);
		WRITE_ONCE(ma_job.result, 0);
	}
	ma_job_queue();
	return 0;
}

static inline int ma_start_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", ma_job.queued);
}

static const struct kernel_param_ops ma_start_ops __maybe_unused = {
	.set = ma_start_set,
	.get = ma_start_get,
};

/* "jobs": 1 to MA_JOBS_MAX, else the load fails with -EINVAL. */
static inline int ma_jobs_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 1 || n > MA_JOBS_MAX)
		return -EINVAL;
	ma_job.jobs = n;
	return 0;
}

static inline int ma_jobs_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", ma_job.jobs);
}

static const struct kernel_param_ops ma_jobs_ops __maybe_unused = {
	.set = ma_jobs_set,
	.get = ma_jobs_get,
};

static inline int ma_held_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&ma_job.held));
}

static const struct kernel_param_ops ma_held_ops __maybe_unused = {
	.get = ma_held_get,
};

/* The knobs, as the table at the top of this file describes them. */
#define MA_KNOB_GATE_MS()						\
	module_param_named(gate_ms, ma_job.gate_ms, uint, 0444);	\
	MODULE_PARM_DESC(gate_ms, "bound in ms of every wait (default 30000)")

#define MA_KNOB_JOBS()							\
	module_param_cb(jobs, &ma_jobs_ops, NULL, 0444);		\
	MODULE_PARM_DESC(jobs, "how many jobs start queues (default 1)")

#define MA_KNOB_START()							\
	module_param_cb(start, &ma_start_ops, NULL, 0644);		\
	MODULE_PARM_DESC(start, "write 1 to queue the job")

#define MA_KNOB_OPEN()							\
	module_param_cb(open, &ma_open_ops, NULL, 0644);		\
	MODULE_PARM_DESC(open, "write 1 to let the held job finish")

#define MA_KNOB_OPEN_FIRST()						\
	module_param_cb(open_first, &ma_open_first_ops, NULL, 0644);	\
	MODULE_PARM_DESC(open_first, "write 1 to let a chain's first job go on")

#define MA_KNOB_STARTED()						\
	module_param_named(started, ma_job.started, int, 0444);	\
	MODULE_PARM_DESC(started, "1 once the job runs")

#define MA_KNOB_HELD()							\
	module_param_cb(held, &ma_held_ops, NULL, 0444);		\
	MODULE_PARM_DESC(held, "how many jobs wait on the gate now")

#define MA_KNOB_CHAINED()						\
	module_param_named(chained, ma_job.chained, int, 0444);		\
	MODULE_PARM_DESC(chained, "1 once the job another job queued runs")

#define MA_KNOB_DONE()							\
	module_param_named(done, ma_job.done, int, 0444);		\
	MODULE_PARM_DESC(done, "1 once the job has finished")

#define MA_KNOB_TIMED_OUT()						\
	module_param_named(timed_out, ma_job.timed_out, int, 0444);	\
	MODULE_PARM_DESC(timed_out, "1 if gate_ms expired before the gate opened")

/* @desc: what the job's result is, in this module. */
#define MA_KNOB_RESULT(desc)						\
	module_param_named(result, ma_job.result, int, 0444);		\
	MODULE_PARM_DESC(result, desc)

#endif /* _MA_JOB_H */
