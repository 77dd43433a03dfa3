/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Where asynchronous signals run. A signal sent to the process goes to any
 * thread that does not block it, preferring one with none pending; under a
 * stream of them (net_tap raises its real-time signal once a received
 * frame) a loaded machine leaves the idle threads with signals pending and
 * the kernel hands the rest to whichever thread is running: a worker lcore,
 * which then runs handlers instead of passes (rx stood still for 0.5 s in
 * fault_tap_signals), or the main thread, which then misses its stop. So
 * every thread blocks them, and one thread, pf-signals, takes them all: its
 * handlers only set flags and counters that the others read.
 */
#ifndef PF_SIGNALS_H
#define PF_SIGNALS_H

/**
 * Block asynchronous signals in the calling thread, before it creates any
 * other (EAL's lcores and control threads inherit the mask). Faults
 * (SIGSEGV and the like) stay open: blocked, they would kill without the
 * handler's report.
 */
void pf_signals_block(void);

/**
 * Start pf-signals, the thread that reads them and runs their handlers. Call
 * it after pf_signals_block() and before rte_eal_init(), so a signal during
 * EAL's start is acted on as later (a second SIGTERM exits at once). If it
 * cannot start, the calling thread unblocks them instead, as before, with
 * a warning on stderr.
 *
 * @return 0, or a negative errno (the fallback is in place).
 */
int pf_signals_start(void);

/**
 * Exit with @p status if the process is still running @p seconds from now
 * (pf-signals logs why and calls _exit). Armed before rte_eal_cleanup():
 * DPDK 22.11 cancels its rte_mp_handle thread there and waits for it, and
 * a cancel is a real-time signal (SIGCANCEL) that is lost when the user's
 * queue of pending signals is full, so the wait would never end. Without
 * the thread (pf_signals_start() failed) this does nothing.
 */
void pf_signals_exit_by(unsigned int seconds, int status);

#endif /* PF_SIGNALS_H */
