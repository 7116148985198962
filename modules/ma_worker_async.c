// SPDX-License-Identifier: GPL-2.0
/*
 * ma_worker_async - tests a load whose init queues async work from a worker
 *
 * The case that made 5.17 revert the 3.8 PF_USED_ASYNC flag (commit
 * 67d6212afda2): the flag is set on the task that calls async_schedule(),
 * and do_init_module() only waited when the loading task itself had it. A
 * module whose init queues its async work from a workqueue worker left the
 * flag unset, so modprobe returned before that work was done.
 *
 * This module's init queues a work item and waits, bounded by gate_ms,
 * until the worker has queued the async job; the job marks "started", waits
 * on a gate the runner opens by writing 1 to "open" (or gate_ms expires),
 * then marks "done". The runner (case async_worker_init_completes) checks
 * that the load does not return while the job is held and that "done" is 1
 * the moment it returns: true where do_init_module() syncs all async work,
 * false with the 3.8 flag.
 */
#include <linux/module.h>
#include <linux/workqueue.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

/* A kworker queues the async job: that task, not modprobe, calls it. */
static int __init ma_worker_async_init(void)
{
	return ma_job_queue_by_worker(system_dfl_wq);
}
module_init(ma_worker_async_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init queues async work from a worker");
MODULE_LICENSE("GPL");
