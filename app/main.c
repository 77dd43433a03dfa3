/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pipefwd: load a topology, validate it, bring up EAL and the runtime, run
 * until a signal (or idle/duration limit), then drain, report and check the
 * accounting invariant. Only this file decides exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "pf_log.h"
#include "pf_reload.h"
#include "pf_runtime.h"
#include "pf_topo.h"

static volatile sig_atomic_t stop_signals;
static volatile sig_atomic_t reload_requests;

static void
on_hup(int sig)
{
	reload_requests++;
}

static void
on_signal(int sig)
{
	/* A second SIGINT/SIGTERM forces an immediate exit. */
	if (++stop_signals > 1)
		_exit(128 + sig);
}

struct options {
	const char *topology;
	const char *stats_json;
	bool check;
	bool quiet;
	uint64_t idle_exit_ms;
	double duration_s;
	int eal_extra_argc;
	char **eal_extra_argv;
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: pipefwd [options] TOPOLOGY.yaml [-- EAL options]\n"
		"       pipefwd --check TOPOLOGY.yaml\n"
		"\n"
		"  -c, --check            validate the topology and exit (no DPDK, no files)\n"
		"  -j, --stats-json FILE  write the final counters as JSON\n"
		"  -i, --idle-exit MS     stop once no packet arrived for MS milliseconds\n"
		"  -d, --duration SEC     stop after SEC seconds\n"
		"  -q, --quiet            no summary on stdout\n"
		"  -h, --help             this text\n"
		"\n"
		"EAL options after '--' are appended to the topology's eal list (last wins).\n"
		"Exit: 0 ok, 78 configuration error, 3 accounting mismatch, 1 runtime error.\n");
}

static int
parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "stats-json", required_argument, NULL, 'j' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+cj:i:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->check = true;
			break;
		case 'j':
			o->stats_json = optarg;
			break;
		case 'i':
			o->idle_exit_ms = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			o->duration_s = strtod(optarg, NULL);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return -EINVAL;
	}
	o->topology = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	o->eal_extra_argc = argc - optind;
	o->eal_extra_argv = argv + optind;
	return 0;
}

/* argv for rte_eal_init: topology eal list, derived lcores, command-line extras. */
static int
build_eal_argv(const struct pf_topo *t, const struct options *o, char **argv, int max,
	       char *lcores_buf, size_t lcores_len)
{
	int argc = 0, i;
	bool has_prefix = false;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	argv[argc++] = (char *)"pipefwd";
	for (i = 0; i < t->eal_argc && argc < max - 8; i++) {
		argv[argc++] = t->eal_argv[i];
		has_prefix |= strncmp(t->eal_argv[i], "--file-prefix", 13) == 0;
	}
	for (i = 0; i < o->eal_extra_argc; i++)
		has_prefix |= strncmp(o->eal_extra_argv[i], "--file-prefix", 13) == 0;
	if (!t->eal_has_lcores) {
		/* The main lcore and every mapped lcore float over all online CPUs. */
		int len = snprintf(lcores_buf, lcores_len, "--lcores=(%u", t->main_lcore);

		for (i = 0; i < t->n_lcores; i++)
			len += snprintf(lcores_buf + len, lcores_len - len, ",%u", t->lcores[i].id);
		snprintf(lcores_buf + len, lcores_len - len, ")@(0-%ld)", ncpu > 0 ? ncpu - 1 : 0);
		argv[argc++] = lcores_buf;
	}
	if (!has_prefix)
		argv[argc++] = (char *)"--file-prefix=pipefwd";
	for (i = 0; i < o->eal_extra_argc && argc < max - 1; i++)
		argv[argc++] = o->eal_extra_argv[i];
	argv[argc] = NULL;
	return argc;
}

static void
run_until_done(struct pf_runtime *rt, const struct options *o)
{
	uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc(), last_rx = 0, last_change = start;
	uint64_t now, rx;

	while (!stop_signals) {
		rte_delay_us_sleep(10 * 1000);
		if (reload_requests != 0) {
			reload_requests = 0;
			pf_reload(rt, o->topology);
		}
		now = rte_rdtsc();
		if (o->duration_s > 0 && (double)(now - start) / (double)hz >= o->duration_s)
			break;
		if (o->idle_exit_ms == 0)
			continue;
		rx = pf_runtime_rx_total(rt);
		if (rx != last_rx) {
			last_rx = rx;
			last_change = now;
		} else if ((now - last_change) * 1000 / hz >= o->idle_exit_ms) {
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	struct options o = { 0 };
	struct pf_errs errs = { 0 };
	struct pf_runtime *rt = NULL;
	struct pf_topo *topo = NULL;
	char *eal_argv[PF_MAX_EAL_ARGS + 64], lcores[1024];
	struct pf_totals tot;
	struct sigaction sa = { 0 };
	int eal_argc, rc, status = 0;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	if (pf_topo_load(o.topology, &topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		fprintf(stderr, "%s: %u error%s\n", o.topology, errs.n, errs.n == 1 ? "" : "s");
		return PF_EXIT_CONFIG;
	}
	if (o.check) {
		pf_topo_describe(topo, stdout);
		pf_topo_free(topo);
		return 0;
	}

	/* DPDK 22.11 telemetry writes replies with write(): a client that leaves
	 * mid-reply must not kill the forwarder. */
	signal(SIGPIPE, SIG_IGN);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);

	eal_argc = build_eal_argv(topo, &o, eal_argv, RTE_DIM(eal_argv), lcores, sizeof(lcores));
	rc = rte_eal_init(eal_argc, eal_argv);
	if (rc < 0) {
		fprintf(stderr, "error: EAL init failed: %s\n", rte_strerror(rte_errno));
		pf_topo_free(topo);
		return 1;
	}
	pf_log_init();
	if (pf_runtime_create(&rt, topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		rte_eal_cleanup();
		pf_topo_free(topo);
		return 1;
	}
	if (pf_runtime_start(rt) < 0) {
		status = 1;
		goto out;
	}
	PF_LOG(INFO, "running %s: %u stages on %u lcores", topo->file, topo->n_stages,
	       topo->n_lcores);
	run_until_done(rt, &o);
	pf_runtime_stop(rt);

	if (!o.quiet)
		pf_report_summary(rt, stdout);
	if (o.stats_json != NULL && pf_report_json(rt, o.stats_json) < 0) {
		fprintf(stderr, "error: cannot write %s: %s\n", o.stats_json, strerror(errno));
		status = 1;
	}
	pf_runtime_totals(rt, &tot);
	if (tot.unaccounted != 0) {
		fprintf(stderr, "error: accounting invariant broken: %" PRId64 " packets unaccounted\n",
			tot.unaccounted);
		status = PF_EXIT_ACCOUNTING;
	}
	if (rt->mbufs_in_use != 0) {
		fprintf(stderr, "error: %" PRId64 " mbufs still in use after shutdown\n",
			rt->mbufs_in_use);
		status = status ? status : PF_EXIT_ACCOUNTING;
	}
out:
	pf_runtime_destroy(rt);
	rte_eal_cleanup();
	pf_topo_free(topo);
	return status;
}
