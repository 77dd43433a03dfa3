/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pf-signals thread (pf_signals.h). Every other thread blocks
 * asynchronous signals. This one reads the ones that have handlers (ours,
 * net_tap's real-time trigger) from a signalfd, up to 64 a read, and calls
 * each installed handler itself. Handlers are async-signal-safe, so they are
 * safe to call from a plain thread. Taking them in batches keeps up where
 * a thread that took them one at a time could not: woken, a handler frame
 * and a sigreturn for each, it let a kill() storm fill the real-time queue,
 * and net_tap's frames then raised SIGIO, which killed the process (SIGIO
 * is handled now too). The other asynchronous signals (SIGQUIT, SIGUSR1,
 * SIGTSTP, ...) are unblocked here and keep their default actions. The
 * thread also holds the exit's deadline (pf_signals_exit_by).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "pf_signals.h"

#define PF_SIGNALS_BATCH 64
/* How often the thread looks at the exit deadline while no signal comes. */
#define PF_SIGNALS_TICK_MS 200

/* pf_signals_exit_by(): when (CLOCK_MONOTONIC ns, 0: none), with what status. */
static int64_t exit_deadline_ns;
static int exit_status;
static unsigned int exit_seconds;

/* The wall clock: pf_now_ns() follows packet time under `clock: pcap`. */
static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
check_exit_deadline(void)
{
	int64_t when = __atomic_load_n(&exit_deadline_ns, __ATOMIC_ACQUIRE);
	char line[160];
	int len;

	if (when == 0 || now_ns() < when)
		return;
	/* write(), not stdio: the main thread may hold stderr's lock. */
	len = snprintf(line, sizeof(line), "pipefwd: EAL cleanup did not finish in %u s "
		       "(a thread it cancels never got the signal: is the user's queue of "
		       "pending signals full?); exiting with status %d\n", exit_seconds,
		       exit_status);
	if (len > 0)   /* if the write fails there is nowhere to say so: exit all the same */
		len = (int)write(STDERR_FILENO, line, (size_t)len);
	_exit(exit_status);
}

void
pf_signals_exit_by(unsigned int seconds, int status)
{
	exit_status = status;
	exit_seconds = seconds;
	__atomic_store_n(&exit_deadline_ns, now_ns() + (int64_t)seconds * 1000000000,
			 __ATOMIC_RELEASE);
}

static void
async_signals(sigset_t *set)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS };
	unsigned int i;

	sigfillset(set);
	for (i = 0; i < RTE_DIM(faults); i++)
		sigdelset(set, faults[i]);
}

/* The signals read from the signalfd: those that have (or get) handlers. */
static void
handled_signals(sigset_t *set)
{
	int s;

	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGIO);
	for (s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaddset(set, s);
}

void
pf_signals_block(void)
{
	sigset_t set;

	async_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void
call_handler(const struct sigaction *sa, int sig, siginfo_t *si)
{
	if (sa->sa_flags & SA_SIGINFO)
		sa->sa_sigaction(sig, si, NULL);
	else
		sa->sa_handler(sig);
}

static bool
has_handler(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ||
	       (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

/*
 * A signal read with no handler installed. SIGIO here is the kernel's word
 * that a queued real-time signal was lost (the queue was full): run every
 * real-time handler once, so a driver that counts them (net_tap's rx
 * trigger) sees an event. Any other takes its default action, as if it had
 * never been blocked: unblocked and raised again in this thread.
 */
static void
no_handler(int sig, siginfo_t *si)
{
	struct sigaction sa;
	sigset_t one;
	int s;

	if (sig == SIGIO) {
		for (s = SIGRTMIN; s <= SIGRTMAX; s++)
			if (sigaction(s, NULL, &sa) == 0 && has_handler(&sa))
				call_handler(&sa, s, si);
		return;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL);    /* a default that ignores */
}

static void
dispatch(const struct signalfd_siginfo *in, unsigned int n)
{
	struct sigaction actions[_NSIG];
	bool looked[_NSIG] = { false };
	unsigned int i;

	for (i = 0; i < n; i++) {
		int sig = (int)in[i].ssi_signo;
		siginfo_t si = { .si_signo = sig, .si_code = in[i].ssi_code,
				 .si_errno = in[i].ssi_errno };

		if (sig <= 0 || sig >= _NSIG)
			continue;
		si.si_pid = (pid_t)in[i].ssi_pid;
		si.si_uid = in[i].ssi_uid;
		si.si_value.sival_ptr = (void *)(uintptr_t)in[i].ssi_ptr;
		/* A handler changes rarely: look each up once a batch. */
		if (!looked[sig] && sigaction(sig, NULL, &actions[sig]) == 0)
			looked[sig] = true;
		if (!looked[sig] || actions[sig].sa_handler == SIG_IGN)
			continue;
		if (has_handler(&actions[sig]))
			call_handler(&actions[sig], sig, &si);
		else
			no_handler(sig, &si);
	}
}

static void *
signal_thread(void *arg)
{
	struct signalfd_siginfo batch[PF_SIGNALS_BATCH];
	int fd = (int)(intptr_t)arg;
	sigset_t open, handled;
	ssize_t n;
	int s;

	/* The rest keep their default actions, delivered to this thread. */
	async_signals(&open);
	handled_signals(&handled);
	for (s = 1; s < _NSIG; s++)
		if (sigismember(&handled, s) == 1)
			sigdelset(&open, s);
	pthread_sigmask(SIG_UNBLOCK, &open, NULL);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		check_exit_deadline();
		if (poll(&p, 1, PF_SIGNALS_TICK_MS) <= 0)
			continue;
		n = read(fd, batch, sizeof(batch));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		dispatch(batch, (unsigned int)((size_t)n / sizeof(batch[0])));
	}
	fprintf(stderr, "error: signal thread: read: %s\n", n < 0 ? strerror(errno) : "end of file");
	return NULL;
}

int
pf_signals_start(void)
{
	sigset_t set;
	pthread_t t;
	int fd, rc;

	handled_signals(&set);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0) {
		rc = errno;
	} else {
		rc = pthread_create(&t, NULL, signal_thread, (void *)(intptr_t)fd);
		if (rc == 0) {
			pthread_setname_np(t, "pf-signals");
			pthread_detach(t);
			return 0;
		}
		close(fd);
	}
	fprintf(stderr, "warning: cannot start the signal thread (%s): "
		"the main thread takes signals\n", strerror(rc));
	async_signals(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return -rc;
}
