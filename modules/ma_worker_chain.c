// SPDX-License-Identifier: GPL-2.0
/*
 * ma_worker_chain - tests a load whose init's worker queues a job that chains
 *
 * A probe a driver's init hands to a worker may queue async work, and that
 * work may queue more once the init has returned (a SCSI scan queued from a
 * probe, whose job queues each disk's probe). All of it is the load's work.
 *
 * This module's init queues a work item on a workqueue of its own and waits,
 * bounded by gate_ms, until the worker has queued job A. A marks "started"
 * and holds on the first job's gate until the runner writes 1 to
 * "open_first"; then it queues job B and ends. B marks "chained" and holds
 * on the gate until the runner writes 1 to "open"; "done" is 1 once B has
 * ended. The runner (case worker_chain_completes) lets A go only once the
 * load is held, so B is queued after the init returned, and checks that
 * "done" is 1 the moment the load returns.
 */
#include <linux/module.h>
#include <linux/workqueue.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_OPEN_FIRST();
MA_KNOB_STARTED();
MA_KNOB_CHAINED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static struct workqueue_struct *ma_wq;

/* The data of job B, the one job A queues. */
static int ma_worker_chain_second;

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	if (data != &ma_worker_chain_second) {
		ma_job_begin();
		ma_job_hold_on(&ma_job.first);
		ma_job_queue_next(&ma_worker_chain_second);
	} else {
		WRITE_ONCE(ma_job.chained, 1);
		ma_job_hold();
	}
	ma_job_end(0);
}

/* A kworker of a workqueue of its own queues job A, not modprobe. */
static int __init ma_worker_chain_init(void)
{
	int ret;

	ma_wq = alloc_workqueue("%s", WQ_UNBOUND, 0, KBUILD_MODNAME);
	if (!ma_wq)
		return -ENOMEM;
	ret = ma_job_queue_by_worker(ma_wq);
	if (ret)
		destroy_workqueue(ma_wq);
	return ret;
}

static void __exit ma_worker_chain_exit(void)
{
	ma_job_exit();
	destroy_workqueue(ma_wq);
}
module_init(ma_worker_chain_init);
module_exit(ma_worker_chain_exit);

MODULE_DESCRIPTION("module_async: init's worker queues a job that queues another");
MODULE_LICENSE("GPL");
