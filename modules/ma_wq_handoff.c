// SPDX-License-Identifier: GPL-2.0
/*
 * ma_wq_handoff - tests a load whose init's job hands work to a workqueue
 *
 * An async job of a load may run part of its work through a plain
 * workqueue and wait for it: pci_call_probe() runs a driver's probe with
 * work_on_cpu() when the device has a NUMA node, and under async probing
 * that happens inside an async job; the probe may queue async work of its
 * own (a SCSI host's scan). That work is queued by a kworker that is
 * neither the loading task nor an async job, after the init has returned,
 * and the load must wait for it all the same.
 *
 * This module's init queues job A. A marks "started" and holds on the first
 * job's gate until the runner writes 1 to "open_first"; then it queues a
 * work item on a workqueue of its own and flushes it. The work item queues
 * job C, which marks "chained" and holds on the gate until the runner
 * writes 1 to "open"; "done" is 1 once C has ended. The runner (case
 * workqueue_handoff_from_job_completes) lets A go only once the load is
 * held, and checks that "done" is 1 the moment the load returns.
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

/* The data of job C, the one the work item queues. */
static int ma_wq_handoff_last;

/* Runs in a kworker, for job A, which waits for it. */
static void ma_handoff_fn(struct work_struct *work)
{
	ma_job_queue_next(&ma_wq_handoff_last);
}

static DECLARE_WORK(ma_handoff, ma_handoff_fn);

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	if (data != &ma_wq_handoff_last) {
		ma_job_begin();
		ma_job_hold_on(&ma_job.first);
		queue_work(ma_wq, &ma_handoff);
		flush_work(&ma_handoff);
	} else {
		WRITE_ONCE(ma_job.chained, 1);
		ma_job_hold();
	}
	ma_job_end(0);
}

static int __init ma_wq_handoff_init(void)
{
	ma_wq = alloc_workqueue("%s", WQ_UNBOUND, 0, KBUILD_MODNAME);
	if (!ma_wq)
		return -ENOMEM;
	ma_job_queue();
	return 0;
}

static void __exit ma_wq_handoff_exit(void)
{
	ma_job_exit();
	destroy_workqueue(ma_wq);
}
module_init(ma_wq_handoff_init);
module_exit(ma_wq_handoff_exit);

MODULE_DESCRIPTION("module_async: init's job hands async work to a workqueue");
MODULE_LICENSE("GPL");
