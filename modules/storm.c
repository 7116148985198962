// SPDX-License-Identifier: GPL-2.0
/*
 * ma_storm_<N> - many loads at once, each with async work of its own
 *
 * One source, built under MA_STORM_NR names (Makefile): at boot, udev's
 * workers load dozens of modules at once, and each load must wait for its
 * own async work and for no other load's.
 *
 * This module's init queues one job with async_schedule(), then holds on
 * the first job's gate until the runner writes 1 to "open_first" (so that
 * the runner can have every load in its init at once), and returns. The
 * job marks "started", holds on the gate until the runner writes 1 to
 * "open", then marks "done". The runner (case load_storm) opens the
 * loads' gates one at a time and checks that each load returns once its
 * own job is done, while the others' are held, with "done" 1 at its return.
 * "held" is 2 once both the job and the init wait: the case
 * concurrent_loads_wait_for_their_own holds ma_storm_0 and ma_storm_1 so.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_OPEN_FIRST();
MA_KNOB_STARTED();
MA_KNOB_HELD();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

static int __init ma_storm_init(void)
{
	ma_job_queue();
	ma_job_hold_on(&ma_job.first);
	return 0;
}
module_init(ma_storm_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: one of many loads at once, each with its own async job");
MODULE_LICENSE("GPL");
