/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one command registry of the stats socket (app/console/pf_console.h).
 *
 * Every /pipefwd/... command is registered here, from the modules' tables,
 * with one trampoline: it finds the command, takes the console lock, refuses
 * while no runtime is published, checks parameters the command does not
 * take, and calls it. The main thread takes the same lock to replace the
 * topology (pf_console_reload) and to withdraw the runtime at shutdown, so a
 * reply never reads what is being freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_telemetry.h>

#include "pf_changes.h"
#include "pf_conf.h"
#include "pf_console.h"
#include "pf_log.h"
#include "pf_reload.h"

static const struct pf_cmd *const cmd_tables[] = {
	pf_stats_cmds, pf_capture_cmds, pf_trace_cmds, pf_change_cmds, pf_learn_cmds,
	pf_lookup_cmds,
	pf_source_cmds,
	pf_port_cmds,
	pf_plan_cmds,
};

static pthread_mutex_t con_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_console con;       /* under con_lock */
static bool con_registered;

static const struct pf_cmd *
cmd_find(const char *name)
{
	const struct pf_cmd *c;
	unsigned int t;

	for (t = 0; t < RTE_DIM(cmd_tables); t++)
		for (c = cmd_tables[t]; c->name != NULL; c++)
			if (strcmp(c->name, name) == 0)
				return c;
	return NULL;
}

static int
cmd_handle(const char *name, const char *params, struct rte_tel_data *d)
{
	const struct pf_cmd *c = cmd_find(name);
	char msg[128];
	long bad;
	int rc;

	if (c == NULL)
		return -ENOENT;
	/* A name, entry or file with a newline or ESC would reach the log and every reader. */
	bad = params != NULL ? pf_ctl_char_at(params, strlen(params)) : -1;
	if (bad >= 0) {
		snprintf(msg, sizeof(msg), "a control character (\\x%02X) at offset %ld of the "
			 "parameters: names, entries and file names are printable text",
			 (unsigned char)params[bad], bad);
		pf_console_error(d, msg);
		return 0;
	}
	pthread_mutex_lock(&con_lock);
	if (con.rt == NULL)
		rc = -ENODEV;   /* starting or shutting down: reply null */
	else if (c->no_params && params != NULL && *params != '\0')
		rc = -EINVAL;
	else
		rc = c->fn(&con, params, d);
	pthread_mutex_unlock(&con_lock);
	return rc;
}

void
pf_console_error(struct rte_tel_data *d, const char *msg)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
}

/*
 * EAL creates the runtime directory 0700, binds its sockets with the
 * process umask (often 0755) and never tightens them. Only the owner (and
 * root) may use the stats: the directory goes to 0700 and every socket in it
 * to 0600, after checking they are ours and not symlinks.
 */
static int
con_secure(void)
{
	static const char *const socks[] = { "dpdk_telemetry.v2", "telemetry", "mp_socket" };
	const char *dir = rte_eal_get_runtime_dir();
	struct stat sb;
	unsigned int i;
	int fd, rc = 0, found = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		PF_LOG(WARNING, "stats: cannot open runtime dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid()) {
		PF_LOG(WARNING, "stats: runtime dir %s is not owned by this user", dir);
		close(fd);
		return -EPERM;
	}
	if ((sb.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
		PF_LOG(WARNING, "stats: cannot chmod 0700 %s: %s", dir, strerror(errno));
		rc = -errno;
	}
	for (i = 0; i < RTE_DIM(socks); i++) {
		if (fstatat(fd, socks[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISSOCK(sb.st_mode) || sb.st_uid != geteuid()) {
			PF_LOG(WARNING, "stats: %s/%s is not our socket", dir, socks[i]);
			rc = -EPERM;
			continue;
		}
		found += i == 0;
		if (fchmodat(fd, socks[i], 0600, 0) < 0) {
			PF_LOG(WARNING, "stats: cannot chmod 0600 %s/%s: %s", dir, socks[i],
			       strerror(errno));
			rc = -errno;
		}
	}
	close(fd);
	if (found == 0) {
		PF_LOG(WARNING, "stats: no telemetry socket in %s (EAL --no-telemetry?)", dir);
		return -ENOENT;
	}
	if (rc == 0)
		PF_LOG(INFO, "stats: %s/dpdk_telemetry.v2 (owner only)", dir);
	return rc;
}

int
pf_console_start(struct pf_runtime *rt, const struct pf_console_opts *o)
{
	const struct pf_cmd *c;
	unsigned int t;
	int rc;

	pf_capture_start(o->capture_dir);
	if (!con_registered) {
		for (t = 0; t < RTE_DIM(cmd_tables); t++)
			for (c = cmd_tables[t]; c->name != NULL; c++) {
				rc = rte_telemetry_register_cmd(c->name, cmd_handle, c->help);
				if (rc < 0) {
					PF_LOG(WARNING, "stats: cannot register %s: %s", c->name,
					       strerror(-rc));
					return rc;
				}
			}
		con_registered = true;
	}
	pthread_mutex_lock(&con_lock);
	if (con.changes == NULL)
		con.changes = pf_changes_new();
	con.request_reload = o->request_reload;
	con.loaded_at = time(NULL);
	con.rt = con.changes != NULL ? rt : NULL;
	pthread_mutex_unlock(&con_lock);
	if (con.changes == NULL) {
		PF_LOG(WARNING, "stats: out of memory: the stats socket is unavailable");
		return -ENOMEM;
	}
	return con_secure();
}

void
pf_console_set_routing(struct pf_routing *r)
{
	pthread_mutex_lock(&con_lock);
	con.routing = r;
	pthread_mutex_unlock(&con_lock);
}

void
pf_console_stop(void)
{
	struct pf_runtime *rt;

	pthread_mutex_lock(&con_lock);
	rt = con.rt;
	con.rt = NULL;
	pthread_mutex_unlock(&con_lock);
	/* No command runs now, and none will: stop what they started. */
	pf_capture_stop();
	if (rt != NULL)
		pf_trace_stop(rt);
	pf_changes_free(con.changes);
	con.changes = NULL;
}

void
pf_console_locked(void (*fn)(struct pf_runtime *rt, void *arg), void *arg)
{
	pthread_mutex_lock(&con_lock);
	if (con.rt != NULL)
		fn(con.rt, arg);
	pthread_mutex_unlock(&con_lock);
}

int
pf_console_reload(const char *path)
{
	char gone[512];
	int rc = -ENODEV;

	pthread_mutex_lock(&con_lock);
	if (con.rt != NULL) {
		rc = pf_reload(con.rt, path);
		if (rc == 0 && pf_changes_discard(con.changes, gone, sizeof(gone)) != 0)
			pf_reload_note(gone);
	}
	pthread_mutex_unlock(&con_lock);
	return rc;
}
