#ifndef EARSHOT_CGLOBALEXECUTOR_H
#define EARSHOT_CGLOBALEXECUTOR_H
#include <stdbool.h>

// Swift's global executor on Linux runs tasks on libdispatch's non-overcommit root queues.
// The first worker thread such a queue starts makes libdispatch start its pool monitor
// (`_dispatch_workq_init_once` in swift-corelibs-libdispatch's event/workqueue.c): a 1 s
// timer on the manager thread that never stops, so every process that has run a Swift
// task wakes once a second for as long as it lives, idle or not.
//
// `earshot_run_tasks_on_overcommit_queue` hands the global executor's jobs (now, after a
// delay, at a deadline) to libdispatch's overcommit root queue of default priority instead,
// through the concurrency runtime's enqueue hooks (`swift_task_enqueueGlobal_hook` and its
// two timed siblings, as swift-nio's and JavaScriptKit's executors take them). Overcommit
// queues are not monitored: their workers are started when work waits and no worker is
// idle, and end after a few seconds without work. Nothing then wakes a process that has
// nothing to do. Timed jobs are `dispatch_after` timers, which sleep in the manager
// thread's epoll until due, as they do on the default executor.
//
// Call it before the first task is enqueued (first thing in `main`): jobs enqueued before
// it run on the default queues, and the monitor they start would keep running. Returns
// false, and changes nothing, when a hook is already taken (another executor owns it).
bool earshot_run_tasks_on_overcommit_queue(void);

#endif
