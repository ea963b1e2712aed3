#include "CGlobalExecutor.h"
#include <stdint.h>

// The concurrency runtime's hooks and entry points (swift/Runtime/Concurrency.h and
// ConcurrencyHooks.def in the Swift repository), with the Swift calling convention they are
// declared with there. A job is opaque here.
#define SWIFT_CC __attribute__((swiftcall))

typedef struct SwiftJob SwiftJob;
// `SerialExecutorRef`: an identity and an implementation word. Both zero is the generic
// executor, the one a global job runs on.
typedef struct {
    void *identity;
    uintptr_t implementation;
} SwiftSerialExecutorRef;

typedef SWIFT_CC void (*EnqueueGlobalOriginal)(SwiftJob *job);
typedef SWIFT_CC void (*EnqueueGlobalWithDelayOriginal)(unsigned long long delay, SwiftJob *job);
typedef SWIFT_CC void (*EnqueueGlobalWithDeadlineOriginal)(long long sec, long long nsec, long long tsec,
                                                          long long tnsec, int clock, SwiftJob *job);

extern void *swift_task_enqueueGlobal_hook;
extern void *swift_task_enqueueGlobalWithDelay_hook;
extern void *swift_task_enqueueGlobalWithDeadline_hook;
extern SWIFT_CC void swift_job_run(SwiftJob *job, SwiftSerialExecutorRef executor);
extern SWIFT_CC void swift_get_time(long long *seconds, long long *nanoseconds, int clock);

// libdispatch's C entry points (dispatch/queue.h, dispatch/time.h), declared here rather than
// through <dispatch/dispatch.h>, which is not on a C target's include path. libdispatch is
// linked into every Swift program that imports Dispatch or Foundation, as earshot does.
typedef void *DispatchQueue;
extern DispatchQueue dispatch_get_global_queue(intptr_t identifier, uintptr_t flags);
extern void dispatch_async_f(DispatchQueue queue, void *context, void (*work)(void *));
extern void dispatch_after_f(uint64_t when, DispatchQueue queue, void *context, void (*work)(void *));
extern uint64_t dispatch_time(uint64_t when, int64_t delta);
enum {
    DispatchQueuePriorityDefault = 0,
    DispatchQueueOvercommit = 0x2,  // DISPATCH_QUEUE_OVERCOMMIT
    DispatchTimeNow = 0,            // DISPATCH_TIME_NOW
};

static DispatchQueue queue;

static void run(void *job) {
    swift_job_run((SwiftJob *)job, (SwiftSerialExecutorRef){0, 0});
}

static SWIFT_CC void enqueue(SwiftJob *job, EnqueueGlobalOriginal original) {
    (void)original;
    dispatch_async_f(queue, job, run);
}

static void enqueueAfter(int64_t nanoseconds, SwiftJob *job) {
    if (nanoseconds <= 0) {
        dispatch_async_f(queue, job, run);
    } else {
        dispatch_after_f(dispatch_time(DispatchTimeNow, nanoseconds), queue, job, run);
    }
}

static SWIFT_CC void enqueueWithDelay(unsigned long long delay, SwiftJob *job, EnqueueGlobalWithDelayOriginal original) {
    (void)original;
    enqueueAfter(delay > INT64_MAX ? INT64_MAX : (int64_t)delay, job);
}

// A deadline on one of Swift's clocks (`swift_clock_id`: continuous or suspending), made a
// delay from that clock's now. The tolerance is left to libdispatch's own timer leeway.
static SWIFT_CC void enqueueWithDeadline(long long sec, long long nsec, long long tsec, long long tnsec, int clock,
                                         SwiftJob *job, EnqueueGlobalWithDeadlineOriginal original) {
    (void)tsec;
    (void)tnsec;
    (void)original;
    long long nowSec = 0, nowNsec = 0;
    swift_get_time(&nowSec, &nowNsec, clock);
    long long seconds = sec - nowSec;
    if (seconds > INT64_MAX / 1000000000LL - 1) {
        enqueueAfter(INT64_MAX, job);
        return;
    }
    enqueueAfter(seconds * 1000000000LL + (nsec - nowNsec), job);
}

bool earshot_run_tasks_on_overcommit_queue(void) {
    if (swift_task_enqueueGlobal_hook || swift_task_enqueueGlobalWithDelay_hook
        || swift_task_enqueueGlobalWithDeadline_hook) {
        return false;
    }
    queue = dispatch_get_global_queue(DispatchQueuePriorityDefault, DispatchQueueOvercommit);
    if (!queue) return false;
    swift_task_enqueueGlobal_hook = (void *)enqueue;
    swift_task_enqueueGlobalWithDelay_hook = (void *)enqueueWithDelay;
    swift_task_enqueueGlobalWithDeadline_hook = (void *)enqueueWithDeadline;
    return true;
}
