/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * End-of-run reports: the human summary and the --stats-json file.
 * Both read the same counters the stats socket reads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "pf_stages.h"
#include "pf_reload.h"
#include "pf_runtime.h"

static double
seconds(const struct pf_runtime *rt)
{
	uint64_t end = rt->stop_tsc ? rt->stop_tsc : rte_rdtsc();

	return (double)(end - rt->start_tsc) / (double)rte_get_tsc_hz();
}

static double
per_packet(uint64_t cycles, uint64_t packets)
{
	return packets ? (double)cycles / (double)packets : 0.0;
}

/* The latency histograms that have samples (pf_latency.h), in microseconds. */
static void
summary_latency(const struct pf_runtime *rt, FILE *out)
{
	double us = 1e6 / (double)rte_get_tsc_hz();
	struct pf_lat_summary s;
	struct pf_lat_hist lat;
	bool head = false;
	uint16_t i;

	for (i = 0; i < rt->n_rings + rt->topo->n_ports; i++) {
		const char *what = i < rt->n_rings ? "ring sojourn" : "port rx->tx";
		const char *name;

		if (i < rt->n_rings) {
			pf_lat_summarize(&rt->rings[i].sojourn, NULL, &s);
			name = rt->rings[i].conf->name;
		} else {
			pf_runtime_port_latency(rt, i - rt->n_rings, &lat);
			pf_lat_summarize(&lat, NULL, &s);
			name = rt->topo->ports[i - rt->n_rings].name;
		}
		if (s.count == 0)
			continue;
		if (!head)
			fprintf(out, "\n%-13s %-24s %9s %10s %10s %10s\n", "latency", "of", "samples",
				"p50 us", "p99 us", "max us");
		head = true;
		fprintf(out, "%-13s %-24s %9" PRIu64 " %10.2f %10.2f %10.2f\n", what, name, s.count,
			(double)s.p50 * us, (double)s.p99 * us, (double)s.max * us);
	}
}

void
pf_report_summary(const struct pf_runtime *rt, FILE *out)
{
	const struct pf_topo *t = rt->topo;
	struct pf_gauge g[PF_MAX_PORTS + 8];
	struct pf_totals tot;
	uint16_t i, k, n;

	fprintf(out, "\n== pipefwd summary: %s, %.3f s ==\n", t->file, seconds(rt));
	fprintf(out, "%-12s %12s %12s %10s %10s %10s\n", "port", "rx", "tx", "imissed", "ierrors",
		"rx_nombuf");
	for (i = 0; i < t->n_ports; i++) {
		struct rte_eth_stats es = { 0 };

		if (!pf_port_present(&t->ports[i]))
			continue;
		pf_runtime_port_stats(rt, i, &es);
		fprintf(out, "%-12s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			t->ports[i].name, pf_runtime_port_rx(rt, i), pf_runtime_port_tx(rt, i),
			es.imissed, es.ierrors, es.rx_nombuf);
	}
	fprintf(out, "\n%-12s %-9s %5s %12s %10s %9s %10s  %s\n", "stage", "type", "lcore",
		"packets", "bursts", "avg_burst", "cyc/pkt", "drops by reason / info");
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];
		const struct pf_rt_stage *rs = &rt->rts[i];
		int any = 0;

		fprintf(out, "%-12s %-9s %5d %12" PRIu64 " %10" PRIu64 " %9.1f %10.1f ",
			st->conf->name, st->ops->type, st->conf->lcore, rs->packets, rs->bursts,
			rs->bursts ? (double)rs->packets / (double)rs->bursts : 0.0,
			per_packet(rs->cycles, rs->packets));
		for (k = 0; k < st->ops->n_ctrs; k++) {
			if (st->ctrs[k] == 0)
				continue;
			fprintf(out, " %s%s=%" PRIu64, st->ops->ctrs[k].kind == PF_CTR_DROP ? "" : "(i)",
				st->ops->ctrs[k].name, st->ctrs[k]);
			any = 1;
		}
		if (rs->ring_full)
			fprintf(out, " ring_full=%" PRIu64, rs->ring_full), any = 1;
		if (rs->no_edge)
			fprintf(out, " no_edge=%" PRIu64, rs->no_edge), any = 1;
		n = pf_stage_gauges(st, g, RTE_DIM(g));
		for (k = 0; k < n; k++)
			if (g[k].value != 0 && strcmp(g[k].name, "in_flight") != 0)
				fprintf(out, " [%s=%" PRIu64 "]", g[k].name, g[k].value), any = 1;
		fprintf(out, "%s\n", any ? "" : " -");
	}
	fprintf(out, "\n%-24s %8s %6s %12s %12s %10s %8s %12s\n", "ring", "size", "burst",
		"enqueued", "dequeued", "ring_full", "hwm", "direct");
	for (i = 0; i < rt->n_rings; i++) {
		const struct pf_rt_ring *r = &rt->rings[i];

		fprintf(out, "%-24s %8u %6u %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %8" PRIu64 " %12" PRIu64 "\n",
			r->conf->name, r->conf->size, r->burst, r->enqueued, r->dequeued,
			r->full_drops, pf_rt_ring_hwm_total(r), r->direct);
	}
	summary_latency(rt, out);
	pf_runtime_totals(rt, &tot);
	fprintf(out,
		"\naccounting: rx %" PRIu64 " + replicas %" PRIu64 " = tx %" PRIu64 " + dropped %" PRIu64 " + in_flight %" PRIu64 "  -> unaccounted %" PRId64 " (%s)\n",
		tot.rx, tot.replicas, tot.tx, tot.dropped, tot.in_flight, tot.unaccounted,
		tot.unaccounted == 0 ? "ok" : "MISMATCH");
	if (pf_reload_status.generation != 0 || pf_reload_status.failures != 0)
		fprintf(out, "reloads: %" PRIu64 " applied (longest %.2f ms), %" PRIu64 " refused\n",
			pf_reload_status.generation, pf_reload_status.max_ms,
			pf_reload_status.failures);
	if (rt->ports_closed && rt->mbufs_kept != 0)
		fprintf(out, "mbufs still in use after shutdown: %" PRId64 "%s, and %" PRId64
			" kept by net_af_xdp's fill rings\n", rt->mbufs_in_use,
			rt->mbufs_in_use == 0 ? " (ok)" : " (LEAK)", rt->mbufs_kept);
	else if (rt->ports_closed)
		fprintf(out, "mbufs still in use after shutdown: %" PRId64 "%s\n", rt->mbufs_in_use,
			rt->mbufs_in_use == 0 ? " (ok)" : " (LEAK)");
}

/* A latency histogram as JSON: samples, mean, p50, p99, max in nanoseconds. */
static void
json_latency(FILE *f, const char *name, const struct pf_lat_hist *h)
{
	struct pf_lat_summary s;
	double ns = 1e9 / (double)rte_get_tsc_hz();

	pf_lat_summarize(h, NULL, &s);
	fprintf(f, ", \"%s\": {\"samples\": %" PRIu64 ", \"mean_ns\": %.0f, \"p50_ns\": %.0f, \"p99_ns\": %.0f, \"max_ns\": %.0f}",
		name, s.count, (double)s.mean * ns, (double)s.p50 * ns, (double)s.p99 * ns,
		(double)s.max * ns);
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int
pf_report_json(const struct pf_runtime *rt, const char *path)
{
	const struct pf_topo *t = rt->topo;
	struct pf_gauge g[PF_MAX_PORTS + 8];
	struct pf_lat_hist lat;
	struct pf_totals tot;
	uint16_t i, k, n;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	pf_runtime_totals(rt, &tot);
	fprintf(f, "{\n  \"topology\": ");
	json_str(f, t->file);
	fprintf(f, ",\n  \"seconds\": %.6f,\n  \"tsc_hz\": %" PRIu64 ",\n  \"ports\": {", seconds(rt),
		rte_get_tsc_hz());
	for (i = 0, n = 0; i < t->n_ports; i++) {
		struct rte_eth_stats es = { 0 };

		if (!pf_port_present(&t->ports[i]))
			continue;
		pf_runtime_port_stats(rt, i, &es);
		fprintf(f, "%s\n    ", n++ ? "," : "");
		json_str(f, t->ports[i].name);
		fprintf(f, ": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"imissed\": %" PRIu64 ", \"ierrors\": %" PRIu64 ", \"oerrors\": %" PRIu64 ", \"rx_nombuf\": %" PRIu64,
			pf_runtime_port_rx(rt, i), pf_runtime_port_tx(rt, i), es.imissed,
			es.ierrors, es.oerrors, es.rx_nombuf);
		pf_runtime_port_latency(rt, i, &lat);
		json_latency(f, "latency", &lat);
		fputc('}', f);
	}
	fprintf(f, "\n  },\n  \"stages\": {");
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];
		const struct pf_rt_stage *rs = &rt->rts[i];
		int first = 1;

		fprintf(f, "%s\n    ", i ? "," : "");
		json_str(f, st->conf->name);
		fprintf(f, ": {\"type\": \"%s\", \"lcore\": %d, \"packets\": %" PRIu64 ", \"bursts\": %" PRIu64 ", \"cycles\": %" PRIu64 ", \"cycles_per_packet\": %.2f, \"time_skipped\": %" PRIu64 ", \"io_cycles_per_packet\": %.2f,\n      \"drops\": {\"ring_full\": %" PRIu64 ", \"no_edge\": %" PRIu64,
			st->ops->type, st->conf->lcore, rs->packets, rs->bursts, rs->cycles,
			per_packet(rs->cycles, rs->packets), rs->time_skipped,
			per_packet(rs->io_cycles, rs->packets), rs->ring_full, rs->no_edge);
		for (k = 0; k < st->ops->n_ctrs; k++)
			if (st->ops->ctrs[k].kind == PF_CTR_DROP)
				fprintf(f, ", \"%s\": %" PRIu64, st->ops->ctrs[k].name, st->ctrs[k]);
		fprintf(f, "},\n      \"counters\": {");
		for (k = 0; k < st->ops->n_ctrs; k++)
			if (st->ops->ctrs[k].kind == PF_CTR_INFO) {
				fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ",
					st->ops->ctrs[k].name, st->ctrs[k]);
				first = 0;
			}
		fprintf(f, "},\n      \"gauges\": {");
		n = pf_stage_gauges(st, g, RTE_DIM(g));
		for (k = 0; k < n; k++) {
			fprintf(f, "%s", k ? ", " : "");
			json_str(f, g[k].name);
			fprintf(f, ": %" PRIu64, g[k].value);
		}
		fprintf(f, "},\n      \"edges\": {");
		for (k = 0; k < st->ops->n_edges; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", st->ops->edge_names[k],
				rs->edge_pkts[k]);
		fprintf(f, "}}");
	}
	fprintf(f, "\n  },\n  \"rings\": {");
	for (i = 0; i < rt->n_rings; i++) {
		const struct pf_rt_ring *r = &rt->rings[i];

		fprintf(f, "%s\n    ", i ? "," : "");
		json_str(f, r->conf->name);
		fprintf(f, ": {\"size\": %u, \"burst\": %u, \"enqueued\": %" PRIu64 ", \"dequeued\": %" PRIu64 ", \"ring_full\": %" PRIu64 ", \"hwm\": %" PRIu64 ", \"direct\": %" PRIu64,
			r->conf->size, r->burst, r->enqueued, r->dequeued, r->full_drops,
			pf_rt_ring_hwm_total(r), r->direct);
		json_latency(f, "sojourn", &r->sojourn);
		fputc('}', f);
	}
	fprintf(f, "\n  },\n  \"totals\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"replicas\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"in_flight\": %" PRIu64 ", \"unaccounted\": %" PRId64 "},\n  \"reload\": {\"generation\": %" PRIu64 ", \"failures\": %" PRIu64 ", \"last_ms\": %.3f, \"max_ms\": %.3f},\n  \"mbufs_in_use_after_stop\": %" PRId64 ",\n  \"mbufs_kept_by_drivers\": %" PRId64 "\n}\n",
		tot.rx, tot.tx, tot.replicas, tot.dropped, tot.in_flight, tot.unaccounted,
		pf_reload_status.generation, pf_reload_status.failures, pf_reload_status.last_ms,
		pf_reload_status.max_ms, rt->ports_closed ? rt->mbufs_in_use : -1,
		rt->ports_closed ? rt->mbufs_kept : -1);
	return fclose(f) == 0 ? 0 : -errno;
}
