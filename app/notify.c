/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * systemd readiness and reload notification for Type=notify units
 * (dist/pipefwd.service). Compiled with PF_HAVE_LIBSYSTEMD when meson found
 * libsystemd; otherwise the calls are empty and the unit is Type=simple.
 */
#include <stdbool.h>
#include <time.h>

#include "pf_notify.h"

#ifdef PF_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

bool
pf_notify_supported(void)
{
	return true;
}

void
pf_notify_ready(void)
{
	sd_notify(0, "READY=1\nSTATUS=forwarding");
}

void
pf_notify_reloading(void)
{
	struct timespec ts;

	/* MONOTONIC_USEC lets newer systemd (Type=notify-reload) match the reload. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ULL +
		   (unsigned long long)ts.tv_nsec / 1000ULL);
}

void
pf_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=draining");
}

#else

bool
pf_notify_supported(void)
{
	return false;
}

void
pf_notify_ready(void)
{
}

void
pf_notify_reloading(void)
{
}

void
pf_notify_stopping(void)
{
}

#endif
