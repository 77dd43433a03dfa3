/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Service manager notifications (systemd sd_notify). Without libsystemd at
 * build time, or when pipefwd was not started by systemd ($NOTIFY_SOCKET
 * unset), every call does nothing.
 */
#ifndef PF_NOTIFY_H
#define PF_NOTIFY_H

#include <stdbool.h>

/** True when built with libsystemd (the calls below can reach systemd). */
bool pf_notify_supported(void);

/** Forwarding runs: READY=1 (after start, and after each reload). */
void pf_notify_ready(void);

/** A reload (SIGHUP or /pipefwd/reload) begins: RELOADING=1. */
void pf_notify_reloading(void);

/** Shutdown begins (drain, report): STOPPING=1. */
void pf_notify_stopping(void);

#endif /* PF_NOTIFY_H */
