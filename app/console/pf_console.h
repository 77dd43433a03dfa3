/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The console: every /pipefwd/ command of the stats socket, from one
 * registry (app/console/commands.c), OVS's unixctl_command_register for
 * pipefwd.
 *
 * Each console module (stats, capture, trace, live changes) offers a table
 * of struct pf_cmd; commands.c registers them all with DPDK's telemetry
 * and runs every call under one lock, with one runtime pointer, so a reply
 * is never built while a reload replaces the topology or while the runtime
 * stops (its pointer is then NULL and every command answers null). The
 * telemetry thread and the main thread take the lock; a worker lcore never
 * does.
 */
#ifndef PF_CONSOLE_H
#define PF_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct rte_tel_data;
struct pf_runtime;
struct pf_changes;
struct pf_routing;

/** What the commands share; they get it locked, with rt non-NULL. */
struct pf_console {
	struct pf_runtime *rt;
	struct pf_changes *changes;       /**< live changes not yet in the files */
	void (*request_reload)(void);     /**< /pipefwd/reload: sets the main thread's flag */
	time_t loaded_at;                 /**< when the running configuration was applied */
	struct pf_routing *routing;       /**< route sources (app/control/pf_routing.h), or NULL */
};

/** One command: /pipefwd/NAME. */
struct pf_cmd {
	const char *name;                 /**< "/pipefwd/rings" */
	const char *help;                 /**< one line, shown by the telemetry client */
	/** Fill @p d; 0, or -errno (the client sees null). */
	int (*fn)(struct pf_console *con, const char *params, struct rte_tel_data *d);
	bool no_params;                   /**< parameters are refused (-EINVAL) */
};

/* The modules' tables, each ended by an entry with a NULL name. */
extern const struct pf_cmd pf_stats_cmds[];      /* console/stats.c */
extern const struct pf_cmd pf_capture_cmds[];    /* console/capture.c */
extern const struct pf_cmd pf_trace_cmds[];      /* console/trace.c */
extern const struct pf_cmd pf_change_cmds[];     /* console/change_cmds.c */
extern const struct pf_cmd pf_learn_cmds[];      /* console/learn_cmds.c */
extern const struct pf_cmd pf_lookup_cmds[];     /* console/lookup_cmds.c */
extern const struct pf_cmd pf_source_cmds[];     /* console/source_cmds.c */
extern const struct pf_cmd pf_port_cmds[];       /* console/ports.c */
extern const struct pf_cmd pf_plan_cmds[];       /* console/plan_cmds.c */

/* What commands.c asks of the modules at start and stop (console-internal). */
/** capture.c: the capture directory (NULL: the default) and dpdk-dumpcap's pdump. */
void pf_capture_start(const char *dir);
/** capture.c: complete a running capture's file, join its writer, free its memory. */
void pf_capture_stop(void);
/** trace.c: disarm a trace on @p rt and free its records. */
void pf_trace_stop(struct pf_runtime *rt);
/** ports.c: port @p p's link, MTU, driver, queues and tx drops into /pipefwd/ports' item @p d. */
void pf_port_fill_more(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t p);

struct pf_console_opts {
	const char *capture_dir;          /**< --capture-dir, NULL: the default */
	void (*request_reload)(void);     /**< called by /pipefwd/reload (a flag, no work) */
};

/**
 * After pf_runtime_create(): make the runtime directory (0700) and the
 * telemetry socket (0600) private to the owner, register every command (the
 * first call) and publish @p rt to them. Returns 0, or -errno when the socket
 * could not be secured or a command not registered (forwarding goes on;
 * stats are then unavailable or only as private as the directory).
 */
int pf_console_start(struct pf_runtime *rt, const struct pf_console_opts *o);

/**
 * Before pf_runtime_stop(), once: withdraw the runtime (commands answer null
 * from now on, after any reply being built), complete a running capture's
 * file, stop a trace and free what the console holds. Safe to call twice.
 */
void pf_console_stop(void);

/** The route sources the commands show (after pf_routing_start; NULL before stopping them). */
void pf_console_set_routing(struct pf_routing *r);

/**
 * The main thread's reload (SIGHUP, /pipefwd/reload): replies wait while the
 * topology is replaced; an applied reload discards the unsaved live changes
 * (the file is the source of truth) and says which. Returns pf_reload's rc.
 */
int pf_console_reload(const char *path);

/**
 * Run @p fn(@p arg) on the main thread under the console's lock, with the
 * runtime (e.g. learnt routes and their upkeep: replies never read a table
 * that changes). Nothing is run while no runtime is published.
 */
void pf_console_locked(void (*fn)(struct pf_runtime *rt, void *arg), void *arg);

struct pf_sink;
/** A sink (app/runtime/pf_sink.h) that renders into the telemetry dict @p d (started). */
void pf_sink_tel_init(struct pf_sink *s, struct rte_tel_data *d);

/** Reply helper: a dict with one "error" string. */
void pf_console_error(struct rte_tel_data *d, const char *msg);

#endif /* PF_CONSOLE_H */
