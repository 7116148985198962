// SPDX-License-Identifier: GPL-2.0
/*
 * ma_nested - tests a load from an async job of a module whose init uses async
 *
 * The limit the author of the 3.8 fix named ("hacky and incomplete"): with
 * the PF_USED_ASYNC flag, do_init_module() skips its wait for async work
 * only if the module's init did not use async. This module's init queues a
 * trivial job with async_schedule(), so its load always waits for all async
 * work. When ma_request's async job loads it with request_module(), the
 * load waits for that job, which waits for the load: a deadlock under either
 * policy (case nested_async_load, unsafe everywhere: runs only when allowed).
 *
 * It must be installed where modprobe finds it (modules.dep). Its job does
 * not wait for anything; "done" tells that it ran.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_STARTED();
MA_KNOB_DONE();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_end(0);
}

static int __init ma_nested_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_nested_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init uses async, loaded from async");
MODULE_LICENSE("GPL");
