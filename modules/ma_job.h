/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one async job of a module_async test module.
 *
 * Every test module runs at most one async job per load, and the runner
 * (tools/testing/selftests/module_async/module_async.c) drives and observes
 * it through module parameters under /sys/module/<module>/parameters/ that
 * are named the same way in every module:
 *
 *   gate_ms    (uint, load time) safety timeout of the gate, in milliseconds
 *   start      (write 1) queue the job, for modules whose init does not
 *   open       (write 1) open the gate: a job held on it proceeds
 *   started    (read) 1 once the job runs (and, if gated, waits on the gate)
 *   done       (read) 1 once the job has finished
 *   timed_out  (read) 1 if gate_ms expired before the gate was opened
 *   result     (read) what the job's work returned
 *
 * Each module defines its job as ma_job_fn() and declares the parameters it
 * uses itself, with module_param_named() on the fields of ma_job and
 * module_param_cb() with the ops below for start and open.
 *
 * No wait is unbounded. A held job waits on the gate with
 * wait_for_completion_timeout(), so a runner that dies cannot leave a job
 * behind for longer than gate_ms. The job holds a reference on its module
 * from queueing until its last statement: delete_module() refuses (EBUSY)
 * while a job runs, instead of freeing the code under it, and a job that
 * never ends (a deadlocked request_module()) leaves a module that cannot be
 * unloaded rather than a crash. The job's return from its last statement is
 * covered by delete_module() itself, which calls async_synchronize_full()
 * after the module's exit and before freeing the module.
 *
 * This header is included by exactly one .c file per module: everything in
 * it is static to that module.
 */
#ifndef _MA_JOB_H
#define _MA_JOB_H

#include <linux/async.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

/* The gate's default safety timeout; the runner passes its own at load. */
#define MA_GATE_MS_DEFAULT	30000

struct ma_job {
	struct completion gate;		/* opened by "open" or module exit */
	struct completion finished;	/* the job's last statement ran */
	unsigned int gate_ms;		/* bound of the wait on the gate */
	bool queued;			/* queued in this load (one shot) */
	int started;
	int done;
	int timed_out;
	int result;
};

/* The job itself: each module that includes this header defines it. */
static void ma_job_fn(void *data, async_cookie_t cookie);

static struct ma_job ma_job = {
	.gate = COMPLETION_INITIALIZER(ma_job.gate),
	.finished = COMPLETION_INITIALIZER(ma_job.finished),
	.gate_ms = MA_GATE_MS_DEFAULT,
};

/* Queue the job; the caller is init, a worker or the "start" knob. */
static inline void ma_job_queue(void)
{
	__module_get(THIS_MODULE);
	ma_job.queued = true;
	async_schedule(ma_job_fn, &ma_job);
}

/* First statement of every job. */
static inline void ma_job_begin(void)
{
	WRITE_ONCE(ma_job.started, 1);
}

/* Hold the job until the gate opens or gate_ms expires. */
static inline void ma_job_hold(void)
{
	unsigned long left;

	left = wait_for_completion_timeout(&ma_job.gate,
					   msecs_to_jiffies(ma_job.gate_ms));
	if (!left) {
		WRITE_ONCE(ma_job.timed_out, 1);
		pr_warn("%s: gate not opened within %u ms, job released\n",
			THIS_MODULE->name, ma_job.gate_ms);
	}
}

/* Last statement of every job: publish result, then done, then let go. */
static inline void ma_job_end(int result)
{
	WRITE_ONCE(ma_job.result, result);
	/* Whoever reads done == 1 must find the result already there. */
	smp_store_release(&ma_job.done, 1);
	complete(&ma_job.finished);
	module_put(THIS_MODULE);
}

static inline void ma_gate_open(void)
{
	complete_all(&ma_job.gate);
}

/*
 * Module exit: open the gate and wait, bounded, for a queued job. The job's
 * module reference keeps delete_module() from getting here while the job
 * runs, so the wait normally returns at once; it is a second line of
 * defence, not a synchronisation the module relies on.
 */
static inline void ma_job_exit(void)
{
	ma_gate_open();
	if (ma_job.queued &&
	    !wait_for_completion_timeout(&ma_job.finished,
					 msecs_to_jiffies(ma_job.gate_ms)))
		pr_err("%s: job still running at exit\n", THIS_MODULE->name);
}

/* "open": writing a true value opens the gate; reading shows if open. */
static inline int ma_open_set(const char *val, const struct kernel_param *kp)
{
	bool open;
	int ret;

	ret = kstrtobool(val, &open);
	if (ret)
		return ret;
	if (!open)
		return -EINVAL;	/* a gate cannot be closed again */
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

/*
 * "start": writing a true value queues the job, once per load. Refused
 * while the module is still loading (a "start=1" in the load's parameter
 * string): the loading task must not be the one that queues the job, or its
 * own do_init_module() would wait for it.
 */
static inline int ma_start_set(const char *val, const struct kernel_param *kp)
{
	bool start;
	int ret;

	ret = kstrtobool(val, &start);
	if (ret)
		return ret;
	if (!start)
		return -EINVAL;
	if (THIS_MODULE->state != MODULE_STATE_LIVE || ma_job.queued)
		return -EBUSY;
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

#endif /* _MA_JOB_H */
