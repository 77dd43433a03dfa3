/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader and validator (include/pf_topo.h).
 *
 * Pass 1 reads every section with typed accessors (types, ranges, unknown
 * keys); each stage type parses its own parameters and table files. Pass 2
 * checks the graph: edges to known stages, rings sized and bursted sanely, no
 * cycle, every non-source stage fed, every stage on exactly one worker lcore,
 * no rx queue polled twice. Every problem is collected; nothing touches DPDK.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pf_stage.h"
#include "pf_topo.h"

static const char *const top_keys[] = { "eal", "ports", "stages", "rings", "lcores", "runtime",
					"route_sources", NULL };
static const char *const port_keys[] = { "device", "mac", "ipv4", "rxd", "txd", "max_frame", "mtu",
					 "rss", "offloads", "ipv6", NULL };
static const char *const rss_words[] = { "symmetric", "device", "off", "external", NULL };
static const char *const offload_words[] = { "auto", "off", NULL };
static const char *const hugepage_words[] = { "auto", "on", "off", NULL };
static const char *const ring_keys[] = { "size", "burst", NULL };
static const char *const runtime_keys[] = { "mbufs", "mbuf_size", "tx_flush_us", "clock",
					      "backpressure", "hugepages", "latency",
					      "idle_sleep_us", NULL };
static const char *const clock_words[] = { "wall", "pcap", NULL };

#define MBUF_CACHE 256

static bool
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* Index of the port named @p name among @p ports[0..n), or -1. */
static int
port_index(const struct pf_port_conf *ports, uint16_t n, const char *name)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		if (strcmp(ports[i].name, name) == 0)
			return i;
	return -1;
}

int
pf_topo_port_index(const struct pf_topo *topo, const char *name)
{
	return port_index(topo->ports, topo->n_ports, name);
}

/* Ports the topology has (n_ports less the holes a removed port left). */
static uint16_t
topo_ports_present(const struct pf_topo *topo)
{
	uint16_t p, n = 0;

	for (p = 0; p < topo->n_ports; p++)
		n += pf_port_present(&topo->ports[p]);
	return n;
}

int
pf_topo_stage_index(const struct pf_topo *topo, const char *name)
{
	uint16_t i;

	for (i = 0; i < topo->n_stages; i++)
		if (strcmp(topo->stages[i].name, name) == 0)
			return i;
	return -1;
}

int
pf_topo_group_index(const struct pf_topo *topo, const char *group)
{
	uint16_t i;

	for (i = 0; i < topo->n_stages; i++)
		if (topo->stages[i].instance == 0 && strcmp(topo->stages[i].group, group) == 0)
			return i;
	return -1;
}

int
pf_topo_ring_index(const struct pf_topo *topo, uint16_t from, uint16_t to)
{
	uint16_t i;

	for (i = 0; i < topo->n_rings; i++)
		if (topo->rings[i].from == from && topo->rings[i].to == to)
			return i;
	return -1;
}

/* @p s quoted for an error; a name too long to exist is cut and says why. */
static const char *
quoted_name(const char *s, char *buf, size_t len)
{
	if (strlen(s) < PF_NAME_MAX)
		snprintf(buf, len, "'%s'", s);
	else
		snprintf(buf, len, "'%.20s...' (a name is at most %d characters)", s,
			 PF_NAME_MAX - 1);
	return buf;
}

int
pf_stage_port_index(const struct pf_stage_env *env, const char *name)
{
	return port_index(env->ports, env->n_ports, name);
}

bool
pf_stage_fed_by(const struct pf_stage_env *env, const struct pf_stage_conf *sc,
		const char *edge, const char *from_type)
{
	/* Every env is its topology's (pf_topo.env): the wiring is there. */
	const struct pf_topo *topo = container_of(env, const struct pf_topo, env);
	uint16_t me = (uint16_t)(sc - topo->stages), s, e;

	for (s = 0; s < topo->n_stages; s++) {
		const struct pf_stage_conf *o = &topo->stages[s];

		if (o->ops == NULL || (from_type != NULL && strcmp(o->ops->type, from_type) != 0))
			continue;
		for (e = 0; e < o->ops->n_edges && e < PF_MAX_EDGES; e++)
			if (o->next[e] == me && strcmp(o->ops->edge_names[e], edge) == 0)
				return true;
	}
	return false;
}

int
pf_stage_port_list(const struct pf_stage_env *env, const struct pf_node *seq, const char *path,
		   uint16_t *idx, uint16_t max, uint16_t *n, struct pf_errs *errs)
{
	char qn[PF_NAME_MAX + 48];
	uint32_t i, j;
	int p, rc = 0;

	*n = 0;
	if (pf_node_expect(seq, PF_NODE_SEQ, path, errs) < 0)
		return -EINVAL;
	if (seq->n == 0)
		return pf_node_err(errs, seq, "%s: needs at least one port", path);
	for (i = 0; i < seq->n; i++) {
		const struct pf_node *it = seq->items[i];

		if (it->kind != PF_NODE_SCALAR) {
			rc = pf_node_err(errs, it, "%s[%u]: expected a port name", path, i);
			continue;
		}
		p = pf_stage_port_index(env, it->value);
		if (p < 0) {
			rc = pf_node_err(errs, it, "%s[%u]: unknown port %s", path, i,
					 quoted_name(it->value, qn, sizeof(qn)));
			continue;
		}
		for (j = 0; j < *n; j++)
			if (idx[j] == p)
				break;
		if (j < *n) {
			rc = pf_node_err(errs, it, "%s[%u]: port '%s' listed twice", path, i,
					 it->value);
			continue;
		}
		if (*n >= max) {
			rc = pf_node_err(errs, it, "%s: more than %u ports", path, max);
			break;
		}
		idx[(*n)++] = (uint16_t)p;
	}
	return rc;
}

/* "path.key", for messages about one key of a mapping. */
static const char *
key_path(char *buf, size_t len, const char *path, const char *key)
{
	snprintf(buf, len, "%s.%s", path, key);
	return buf;
}

/* ---- eal ---------------------------------------------------------------- */

static void
load_eal(struct pf_topo *t, const struct pf_node *eal, struct pf_errs *errs)
{
	const struct pf_node *nodes[PF_MAX_EAL_ARGS];
	uint32_t i;

	if (eal == NULL)
		return;
	if (pf_node_expect(eal, PF_NODE_SEQ, "eal", errs) < 0)
		return;
	for (i = 0; i < eal->n; i++) {
		const struct pf_node *it = eal->items[i];
		const char *v = it->value;

		if (it->kind != PF_NODE_SCALAR) {
			pf_node_err(errs, it, "eal[%u]: expected a string", i);
			continue;
		}
		if (t->eal_argc >= PF_MAX_EAL_ARGS - 8) {
			pf_node_err(errs, it, "eal: more than %d arguments", PF_MAX_EAL_ARGS - 8);
			break;
		}
		nodes[t->eal_argc] = it;
		t->eal_argv[t->eal_argc++] = strdup(v);
	}
	/* As EAL will read them: the errors point at the list's items. */
	pf_eal_read(&t->eal, t->eal_argc, t->eal_argv, nodes, errs);
	t->eal_has_lcores = t->eal.has_lcores;
	t->main_lcore = pf_eal_main_lcore(&t->eal);
}

int
pf_topo_check_eal(struct pf_topo *t, struct pf_errs *errs)
{
	unsigned int before = errs->n, main = pf_eal_main_lcore(&t->eal);
	uint16_t i;

	/* The command line may have added an lcore set or moved the main lcore. */
	t->eal_has_lcores = t->eal.has_lcores;
	if (t->eal.has_lcores && !pf_eal_lcore_on(&t->eal, main))
		pf_err_add(errs, t->file, 0, 0,
			   "the main lcore %u is not in EAL's lcore set (%s): EAL would not start",
			   main, t->eal.lcores_opt);
	if (t->hugepages == PF_HUGE_OFF && t->eal.socket_mem)
		pf_err_add(errs, t->file, 0, 0,
			   "--socket-mem with runtime.hugepages: off (--no-huge): EAL takes --socket-mem only with hugepages (give -m)");
	for (i = 0; i < t->n_lcores; i++) {
		const struct pf_lcore_conf *l = &t->lcores[i];

		if (!pf_eal_lcore_on(&t->eal, l->id))
			pf_node_err(errs, l->node,
				    "lcores: lcore %u is not in EAL's lcore set (%s): its stages would never run",
				    l->id, t->eal.lcores_opt);
		else if (l->id == main && main != t->main_lcore)
			pf_node_err(errs, l->node,
				    "lcores: lcore %u is the main lcore (--main-lcore on the command line); map stages to worker lcores",
				    l->id);
	}
	t->main_lcore = main;
	return errs->n == before ? 0 : -EINVAL;
}

/* ---- ports -------------------------------------------------------------- */

/* Value of "key=" in a vdev argument string, copied to @p out. */
static bool
devarg(const char *dev, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = dev;

	while ((p = strchr(p, ',')) != NULL) {
		p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1, *end = strchr(v, ',');
			size_t vl = end ? (size_t)(end - v) : strlen(v);

			snprintf(out, len, "%.*s", (int)vl, v);
			return true;
		}
	}
	return false;
}

/* Count the records of a classic pcap file (net_pcap infinite_rx preloads them). */
static long
pcap_count(FILE *f)
{
	uint8_t hdr[24], rec[16];
	uint32_t incl;
	long n = 0;
	bool swap;

	if (fread(hdr, 1, 24, f) != 24)
		return -1;
	swap = hdr[0] == 0xa1; /* big-endian magic: a1 b2 c3 d4 (or a1 b2 3c 4d for ns) */
	while (fread(rec, 1, 16, f) == 16) {
		incl = swap ? ((uint32_t)rec[8] << 24 | rec[9] << 16 | rec[10] << 8 | rec[11]) :
			      ((uint32_t)rec[11] << 24 | rec[10] << 16 | rec[9] << 8 | rec[8]);
		if (fseek(f, incl, SEEK_CUR) != 0)
			break;
		n++;
	}
	return n;
}

/* libpcap's pcap_open_offline reads these: pcap (us, ns; either byte order) and pcapng. */
static bool
pcap_magic(const uint8_t m[4])
{
	static const uint8_t magics[][4] = {
		{ 0xd4, 0xc3, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0xc3, 0xd4 }, { 0x4d, 0x3c, 0xb2, 0xa1 },
		{ 0xa1, 0xb2, 0x3c, 0x4d }, { 0x0a, 0x0d, 0x0d, 0x0a },
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(magics); i++)
		if (memcmp(m, magics[i], 4) == 0)
			return true;
	return false;
}

/*
 * An rx_pcap as net_pcap will open it: readable, a regular file (a FIFO
 * would block the start, a device never gives a pcap), with a pcap or
 * pcapng header; with infinite_rx its records are counted (preloaded).
 */
static void
check_rx_pcap(struct pf_port_conf *pc, const struct pf_node *dn, const char *path,
	      bool infinite, struct pf_errs *errs)
{
	const char *kind;
	struct stat sb;
	uint8_t m[4];
	FILE *f;
	long n;
	int fd = pf_file_open_regular(path, UINT64_MAX, &sb, &kind);

	if (fd < 0) {
		if (kind != NULL)
			pf_node_err(errs, dn, "ports.%s: rx_pcap '%s' is %s, not a pcap file",
				    pc->name, path, kind);
		else
			pf_node_err(errs, dn, "ports.%s: rx_pcap '%s' not readable: %s", pc->name,
				    path, strerror(-fd));
		return;
	}
	f = fdopen(fd, "rb");
	if (f == NULL) {
		close(fd);
		return;
	}
	if (fread(m, 1, 4, f) != 4 || !pcap_magic(m)) {
		pf_node_err(errs, dn, "ports.%s: rx_pcap '%s' is not a pcap file (no pcap or "
			    "pcapng header)", pc->name, path);
	} else if (infinite) {
		rewind(f);
		n = pcap_count(f);
		if (n < 0)
			pf_node_err(errs, dn, "ports.%s: rx_pcap '%s' is not a pcap file",
				    pc->name, path);
		else
			pc->pcap_preload = (uint32_t)n;
	}
	fclose(f);
}

/*
 * The virtual device drivers DPDK 22.11 ships for ethdev. rte_dev_probe of
 * any other name fails at start with a misleading errno: say it here.
 */
static const char *const vdev_drivers[] = {
	"net_af_packet", "net_af_xdp", "net_bonding", "net_failsafe", "net_memif", "net_null",
	"net_pcap", "net_ring", "net_softnic", "net_tap", "net_tun", "net_vdev_netvsc",
	"net_vhost", "net_virtio_user", "net_kni", NULL
};

static void
check_vdev_driver(struct pf_port_conf *pc, const struct pf_node *dn, struct pf_errs *errs)
{
	size_t n = strcspn(pc->device, ",");
	char list[256] = "";
	int i;

	/* The instance name is the driver name plus digits or "_...": net_pcap0, net_tap_x. */
	for (i = 0; vdev_drivers[i] != NULL; i++) {
		size_t dl = strlen(vdev_drivers[i]), k = dl;

		if (n < dl || strncmp(pc->device, vdev_drivers[i], dl) != 0)
			continue;
		while (k < n && isdigit((unsigned char)pc->device[k]))
			k++;
		if (k == n || pc->device[k] == '_')
			return;
	}
	for (i = 0; vdev_drivers[i] != NULL; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 vdev_drivers[i]);
	pf_node_err(errs, dn, "ports.%s.device: unknown virtual device driver in '%.*s' "
		    "(known: %s)", pc->name, (int)(n < 40 ? n : 40), pc->device, list);
}

/*
 * net_failsafe's sub-devices: dev(X) probes X as a device of its own, so a
 * vdev there is a second port pipefwd neither configures nor polls (and
 * exec(CMD) runs a shell command at start, fd(N) reads names from a file
 * descriptor). Only PCI addresses, the NICs failsafe is for, are taken.
 */
static void
check_failsafe(struct pf_port_conf *pc, const struct pf_node *dn, struct pf_errs *errs)
{
	const char *p = pc->device;

	if (strncmp(p, "net_failsafe", 12) != 0)
		return;
	while ((p = strchr(p, ',')) != NULL) {
		p++;
		if (strncmp(p, "exec(", 5) == 0 || strncmp(p, "fd(", 3) == 0) {
			pf_node_err(errs, dn, "ports.%s.device: net_failsafe's %.*s(...) runs a command "
				    "or reads device names at start: name the sub-device with dev(PCI address)",
				    pc->name, (int)strcspn(p, "("), p);
			return;
		}
		if (strncmp(p, "dev(", 4) == 0 && !isxdigit((unsigned char)p[4])) {
			pf_node_err(errs, dn, "ports.%s.device: net_failsafe's dev(%.*s) would make a "
				    "second virtual device that no stage polls: dev() takes a PCI address",
				    pc->name, (int)strcspn(p + 4, ",)"), p + 4);
			return;
		}
	}
}

static void
check_pcap_device(struct pf_port_conf *pc, const struct pf_node *dn, struct pf_errs *errs)
{
	char path[PATH_MAX], flag[16];
	struct stat sb;

	if (strncmp(pc->device, "net_pcap", 8) != 0)
		return;
	if (devarg(pc->device, "rx_pcap", path, sizeof(path)))
		check_rx_pcap(pc, dn, path,
			      devarg(pc->device, "infinite_rx", flag, sizeof(flag)) &&
			      strcmp(flag, "1") == 0, errs);
	if (devarg(pc->device, "tx_pcap", path, sizeof(path))) {
		char dir[PATH_MAX], *slash;

		/* libpcap opens it for writing: a FIFO blocks the start, a device gets pcap. */
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			pf_node_err(errs, dn, "ports.%s: tx_pcap '%s' is %s, not a pcap file",
				    pc->name, path, pf_file_kind(sb.st_mode));
			return;
		}
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash != NULL)
			slash[slash == dir] = '\0';   /* "/out.pcap": the directory is "/" */
		else
			snprintf(dir, sizeof(dir), ".");
		if (access(dir, W_OK) != 0)
			pf_node_err(errs, dn, "ports.%s: tx_pcap directory '%s' not writable: %s",
				    pc->name, dir, strerror(errno));
	}
}

/* `ipv6:` one "addr/len" or a list of them; link-local ones are derived from the MAC. */
static void
parse_port_ipv6(struct pf_port_conf *pc, const struct pf_node *v, const char *path,
		struct pf_errs *errs)
{
	const struct pf_node *one = v;
	uint32_t i, n = v->kind == PF_NODE_SEQ ? v->n : 1;

	if (n > PF_PORT_IPV6_MAX) {
		pf_node_err(errs, v, "%s: at most %d addresses", path, PF_PORT_IPV6_MAX);
		return;
	}
	for (i = 0; i < n; i++) {
		uint8_t *a = pc->ipv6[pc->n_ipv6];

		if (v->kind == PF_NODE_SEQ)
			one = v->items[i];
		if (pf_node_ipv6_prefix(one, path, false, a, &pc->ipv6_len[pc->n_ipv6], errs) < 0)
			continue;
		if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) ||
		    pc->ipv6_len[pc->n_ipv6] == 0) {
			pf_node_err(errs, one, "%s: '%s' must be a unicast global (or ULA) address: "
				    "the link-local one comes from the MAC", path, one->value);
			continue;
		}
		pc->n_ipv6++;
	}
}

/*
 * What a load takes from outside the file: the live changes it applies
 * (pf_topo_load_edited) and the running topology whose port indexes it keeps.
 */
struct topo_edits {
	struct pf_change *ch;
	unsigned int n;
	const struct pf_topo *running;
};

/*
 * The index port @p name gets. Loaded for a running topology, a port it runs
 * keeps its index (learnt MACs, neighbours and routes name ports by index)
 * and a new one takes the next index after every running one, or, when all
 * PF_MAX_PORTS are used, a hole a removed port left (one reload or more
 * ago: what named it is gone). Without one, file order. Returns -1 when none
 * is free.
 */
static int
port_slot(const struct pf_topo *t, const struct topo_edits *ed, const struct pf_node *ports,
	  const char *name)
{
	const struct pf_topo *run = ed->running;
	uint16_t next = run != NULL ? run->n_ports : 0, p;
	uint32_t i;
	int k;

	if (run == NULL)
		return t->n_ports < PF_MAX_PORTS ? t->n_ports : -1;
	k = port_index(run->ports, run->n_ports, name);
	if (k >= 0)
		return k;
	/* After the running ports, in file order: count the new ones before this one. */
	for (i = 0; i < ports->n && strcmp(ports->keys[i]->value, name) != 0; i++)
		if (port_index(run->ports, run->n_ports, ports->keys[i]->value) < 0)
			next++;
	if (next < PF_MAX_PORTS)
		return next;
	for (p = 0; p < PF_MAX_PORTS; p++)
		if (t->ports[p].name[0] == '\0' && (p >= run->n_ports || run->ports[p].name[0] == '\0'))
			return p;
	return -1;
}

static void
load_ports(struct pf_topo *t, const struct pf_node *ports, const struct topo_edits *ed,
	   struct pf_errs *errs)
{
	char path[PF_CONF_PATH_MAX], kp[PF_CONF_PATH_MAX + 16];
	uint32_t i;
	int slot;

	if (ports == NULL) {
		pf_err_add(errs, t->file, 0, 0, "missing required key 'ports'");
		return;
	}
	if (pf_node_expect(ports, PF_NODE_MAP, "ports", errs) < 0)
		return;
	if (ports->n == 0)
		pf_node_err(errs, ports, "ports: at least one port is required");
	for (i = 0; i < ports->n; i++) {
		const struct pf_node *pn = ports->items[i], *v;
		struct pf_port_conf *pc;
		const char *name = ports->keys[i]->value, *dev;
		uint32_t u;
		int w;

		if (name[0] == '\0') {
			pf_node_err(errs, ports->keys[i], "ports: a port needs a name");
			continue;
		}
		slot = port_slot(t, ed, ports, name);
		if (slot < 0) {
			pf_node_err(errs, ports->keys[i], "ports: more than %d ports", PF_MAX_PORTS);
			return;
		}
		pc = &t->ports[slot];
		if (slot >= t->n_ports)
			t->n_ports = (uint16_t)(slot + 1);
		snprintf(pc->name, sizeof(pc->name), "%s", name);
		if (strlen(name) >= PF_NAME_MAX)
			pf_node_err(errs, ports->keys[i], "ports: a name is at most %d characters, "
				    "'%.20s...' has %zu", PF_NAME_MAX - 1, name, strlen(name));
		pc->node = pn;
		pc->rxd = 1024;
		pc->txd = 1024;
		pc->mtu = 1500;
		pc->max_frame = 0;
		snprintf(path, sizeof(path), "ports.%s", name);
		if (pf_node_expect(pn, PF_NODE_MAP, path, errs) < 0)
			continue;
		pf_map_check_keys(pn, path, port_keys, errs);
		v = pf_map_get(pn, "device");
		if (v == NULL) {
			pf_node_err(errs, ports->keys[i], "%s: missing required key 'device'", path);
		} else if (pf_node_str(v, key_path(kp, sizeof(kp), path, "device"), &dev, errs) == 0) {
			if (strlen(dev) >= sizeof(pc->device)) {
				pf_node_err(errs, v, "%s.device: a device string is at most "
					    "%zu characters, this one has %zu", path,
					    sizeof(pc->device) - 1, strlen(dev));
				continue;
			}
			snprintf(pc->device, sizeof(pc->device), "%s", dev);
			pc->is_vdev = strncmp(dev, "net_", 4) == 0;
			if (pc->is_vdev) {
				check_vdev_driver(pc, v, errs);
				check_failsafe(pc, v, errs);
			}
			check_pcap_device(pc, v, errs);
		}
		if ((v = pf_map_get(pn, "mac")) != NULL &&
		    pf_node_mac(v, key_path(kp, sizeof(kp), path, "mac"), pc->mac, errs) == 0) {
			pc->has_mac = true;
			if (pc->mac[0] & 1)
				pf_node_err(errs, v, "%s.mac: %s is a group address", path, v->value);
		}
		if ((v = pf_map_get(pn, "ipv4")) != NULL &&
		    pf_node_ipv4_prefix(v, key_path(kp, sizeof(kp), path, "ipv4"), false, &pc->ipv4,
					&pc->ipv4_len, errs) == 0)
			pc->has_ipv4 = true;
		if ((v = pf_map_get(pn, "ipv6")) != NULL)
			parse_port_ipv6(pc, v, key_path(kp, sizeof(kp), path, "ipv6"), errs);
		if ((v = pf_map_get(pn, "rxd")) != NULL &&
		    pf_node_u32(v, key_path(kp, sizeof(kp), path, "rxd"), 64, 16384, &u, errs) == 0)
			pc->rxd = (uint16_t)u;
		if ((v = pf_map_get(pn, "txd")) != NULL &&
		    pf_node_u32(v, key_path(kp, sizeof(kp), path, "txd"), 64, 16384, &u, errs) == 0)
			pc->txd = (uint16_t)u;
		if ((v = pf_map_get(pn, "max_frame")) != NULL &&
		    pf_node_u32(v, key_path(kp, sizeof(kp), path, "max_frame"), 64, 9018, &u, errs) == 0)
			pc->max_frame = (uint16_t)u;
		if ((v = pf_map_get(pn, "mtu")) != NULL &&
		    pf_node_u32(v, key_path(kp, sizeof(kp), path, "mtu"), 68, 9004, &u, errs) == 0)
			pc->mtu = (uint16_t)u;
		if ((v = pf_map_get(pn, "rss")) != NULL &&
		    pf_node_enum(v, key_path(kp, sizeof(kp), path, "rss"), rss_words, &w, errs) == 0)
			pc->rss = (uint8_t)w;
		if ((v = pf_map_get(pn, "offloads")) != NULL &&
		    pf_node_enum(v, key_path(kp, sizeof(kp), path, "offloads"), offload_words, &w,
				 errs) == 0)
			pc->offloads_off = w == 1;
		/* The frame limit follows the IP MTU unless max_frame overrides it. */
		if (pc->max_frame == 0)
			pc->max_frame = pc->mtu + 14;   /* Ethernet header; +4 when tagged (rx) */
	}
}

/* Whether @p a and @p b share their first @p len bits. */
static bool
ipv6_prefix_eq(const uint8_t *a, const uint8_t *b, unsigned int len)
{
	unsigned int k = len / 8;

	return memcmp(a, b, k) == 0 &&
	       (len % 8 == 0 || ((a[k] ^ b[k]) & (uint8_t)(0xff << (8 - len % 8))) == 0);
}

/* An address of the port's own subnet that no host may have: network or broadcast. */
static bool
ipv4_net_or_bcast(uint32_t a, uint8_t len)
{
	uint32_t host = len >= 31 ? 0 : ~0u >> len;

	return host != 0 && ((a & host) == 0 || (a & host) == host);
}

/*
 * Port addresses that can never work, and the same address or subnet on
 * two ports (which port a connected host is on would depend on the order).
 * After load_ports, with every port's addresses read.
 */
static void
check_port_addrs(struct pf_topo *t, struct pf_errs *errs)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16];
	uint16_t i, j, a, b;

	for (i = 0; i < t->n_ports; i++) {
		const struct pf_port_conf *pc = &t->ports[i];
		const struct pf_node *v4 = pf_map_get(pc->node, "ipv4");
		const struct pf_node *v6 = pf_map_get(pc->node, "ipv6");

		if (pc->has_ipv4 && ipv4_net_or_bcast(pc->ipv4, pc->ipv4_len))
			pf_node_err(errs, v4, "ports.%s.ipv4: %s is the %s address of its subnet, "
				    "not a host's", pc->name, v4->value,
				    (pc->ipv4 & (~0u >> pc->ipv4_len)) == 0 ? "network" : "broadcast");
		for (a = 0; a < pc->n_ipv6; a++) {
			const uint8_t *x = pc->ipv6[a];
			const struct pf_node *n = v6->kind == PF_NODE_SEQ ? v6->items[a] : v6;

			if (memcmp(x, zero, 15) == 0 && x[15] <= 1)
				pf_node_err(errs, n, "ports.%s.ipv6: %s is the %s address: never "
					    "a port's (RFC 4291 2.5.2, 2.5.3)", pc->name, n->value,
					    x[15] == 0 ? "unspecified" : "loopback");
			else if (memcmp(x, v4mapped, 12) == 0)
				pf_node_err(errs, n, "ports.%s.ipv6: %s is IPv4-mapped (::ffff:0:0/96): "
					    "never a port's (RFC 4291 2.5.5.2)", pc->name, n->value);
		}
		/* IPv6 needs links of 1280 bytes at least (RFC 8200 5). */
		if (pc->n_ipv6 != 0 && pc->max_frame < 1280 + 14)
			pf_node_err(errs, pf_map_get(pc->node, "max_frame") != NULL ?
				    pf_map_get(pc->node, "max_frame") : pf_map_get(pc->node, "mtu"),
				    "ports.%s: an IPv6 port's MTU is 1280 at least (RFC 8200 5); "
				    "this one is %u", pc->name, pc->max_frame - 14u);
		for (j = 0; j < i; j++) {
			const struct pf_port_conf *pj = &t->ports[j];
			uint32_t m = pc->ipv4_len == 0 ? 0 : ~0u << (32 - pc->ipv4_len);

			if (pc->has_ipv4 && pj->has_ipv4 && pc->ipv4_len == pj->ipv4_len &&
			    (pc->ipv4 & m) == (pj->ipv4 & m))
				pf_node_err(errs, v4, pc->ipv4 == pj->ipv4 ?
					    "ports.%s.ipv4: %s is port %s's address too" :
					    "ports.%s.ipv4: %s is on port %s's subnet too", pc->name,
					    v4->value, pj->name);
			for (a = 0; a < pc->n_ipv6; a++)
				for (b = 0; b < pj->n_ipv6; b++) {
					const struct pf_node *n = v6->kind == PF_NODE_SEQ ?
								  v6->items[a] : v6;

					if (pc->ipv6_len[a] != pj->ipv6_len[b] ||
					    !ipv6_prefix_eq(pc->ipv6[a], pj->ipv6[b], pc->ipv6_len[a]))
						continue;
					pf_node_err(errs, n, memcmp(pc->ipv6[a], pj->ipv6[b], 16) == 0 ?
						    "ports.%s.ipv6: %s is port %s's address too" :
						    "ports.%s.ipv6: %s is on port %s's subnet too",
						    pc->name, n->value, pj->name);
				}
		}
	}
}

/* ---- stages ------------------------------------------------------------- */

static const char *const common_stage_keys[] = { "type", "next", "burst", "instances" };

static int
check_stage_keys(const struct pf_node *sn, const char *path, const struct pf_stage_ops *ops,
		 struct pf_errs *errs)
{
	const char *allowed[64];
	int n = 0, i;

	for (i = 0; i < (int)RTE_DIM(common_stage_keys); i++)
		allowed[n++] = common_stage_keys[i];
	for (i = 0; ops->ctl.param_keys != NULL && ops->ctl.param_keys[i] != NULL && n < 63; i++)
		allowed[n++] = ops->ctl.param_keys[i];
	allowed[n] = NULL;
	return pf_map_check_keys(sn, path, allowed, errs);
}

/*
 * "instances: N": expand @p sc (the last stage loaded) into N confs named
 * "<name>.0" .. "<name>.<N-1>" that share its YAML node, type and edges.
 */
static void
load_instances(struct pf_topo *t, struct pf_stage_conf *sc, const struct pf_node *v,
	       const char *path, struct pf_errs *errs)
{
	char kp[PF_CONF_PATH_MAX + 16];
	uint32_t n, k;
	uint16_t base = (uint16_t)(sc - t->stages);

	if (pf_node_u32(v, key_path(kp, sizeof(kp), path, "instances"), 1, PF_MAX_INSTANCES, &n,
			errs) < 0 || n == 1)
		return;
	if (strlen(sc->group) + 1 + (n > 10 ? 2 : 1) >= PF_NAME_MAX) {
		pf_node_err(errs, v, "%s.instances: instance names '%s.%u' would be longer than %d",
			    path, sc->group, n - 1, PF_NAME_MAX - 1);
		return;
	}
	if (t->n_stages + n - 1 > PF_MAX_STAGES) {
		pf_node_err(errs, v, "%s.instances: more than %d stages with the instances", path,
			    PF_MAX_STAGES);
		return;
	}
	for (k = 0; k < n; k++) {
		struct pf_stage_conf *ic = &t->stages[base + k];

		if (k > 0) {
			*ic = *sc;
			t->n_stages++;
		}
		ic->instance = (uint16_t)k;
		ic->n_instances = (uint16_t)n;
		ic->first = base;
		snprintf(ic->name, sizeof(ic->name), "%s.%u", ic->group, k);
	}
}

/* An instance name must not be the name of another stage ("acl.0" and acl with instances). */
static void
check_instance_names(struct pf_topo *t, const struct pf_node *stages, struct pf_errs *errs)
{
	uint16_t a, b;

	for (a = 0; a < t->n_stages; a++)
		for (b = 0; b < t->n_stages; b++)
			if (t->stages[a].n_instances > 1 && t->stages[b].n_instances == 1 &&
			    strcmp(t->stages[a].name, t->stages[b].name) == 0)
				pf_node_err(errs, t->stages[b].node != NULL ? t->stages[b].node : stages,
					    "stages: '%s' is also the name of an instance of '%s'",
					    t->stages[b].name, t->stages[a].group);
}

static void
load_stages(struct pf_topo *t, const struct pf_node *stages, struct pf_errs *errs)
{
	char path[PF_CONF_PATH_MAX], kp[PF_CONF_PATH_MAX + 16], types[256];
	uint32_t i;
	int j;

	if (stages == NULL) {
		pf_err_add(errs, t->file, 0, 0, "missing required key 'stages'");
		return;
	}
	if (pf_node_expect(stages, PF_NODE_MAP, "stages", errs) < 0)
		return;
	types[0] = '\0';
	for (j = 0; pf_stage_types[j] != NULL; j++)
		snprintf(types + strlen(types), sizeof(types) - strlen(types), "%s%s", j ? ", " : "",
			 pf_stage_types[j]->type);

	for (i = 0; i < stages->n; i++) {
		const struct pf_node *sn = stages->items[i], *v;
		const char *name = stages->keys[i]->value, *type;
		struct pf_stage_conf *sc;

		if (t->n_stages >= PF_MAX_STAGES) {
			pf_node_err(errs, stages->keys[i], "stages: more than %d stages",
				    PF_MAX_STAGES);
			return;
		}
		sc = &t->stages[t->n_stages++];
		snprintf(sc->name, sizeof(sc->name), "%s", name);
		snprintf(sc->group, sizeof(sc->group), "%s", name);
		sc->n_instances = 1;
		sc->first = (uint16_t)(t->n_stages - 1);
		sc->env = &t->env;
		if (strlen(name) >= PF_NAME_MAX)
			pf_node_err(errs, stages->keys[i],
				    "stages: a name is at most %d characters, '%.20s...' has %zu",
				    PF_NAME_MAX - 1, name, strlen(name));
		if (pf_topo_port_index(t, name) >= 0)
			pf_node_err(errs, stages->keys[i],
				    "stages: '%s' is already the name of a port", name);
		sc->node = sn;
		sc->lcore = -1;
		sc->burst = t->burst_default;
		for (j = 0; j < PF_MAX_EDGES; j++)
			sc->next[j] = PF_NONE;
		snprintf(path, sizeof(path), "stages.%s", name);
		if (pf_node_expect(sn, PF_NODE_MAP, path, errs) < 0)
			continue;
		v = pf_map_get(sn, "type");
		if (v == NULL) {
			pf_node_err(errs, stages->keys[i], "%s: missing required key 'type'", path);
			continue;
		}
		if (pf_node_str(v, "type", &type, errs) < 0)
			continue;
		sc->ops = pf_stage_type_find(type);
		if (sc->ops == NULL) {
			pf_node_err(errs, v, "%s.type: unknown stage type '%s' (known: %s)", path, type,
				    types);
			continue;
		}
		check_stage_keys(sn, path, sc->ops, errs);
		if ((v = pf_map_get(sn, "burst")) != NULL) {
			if (!(sc->ops->flags & PF_STAGE_SOURCE))
				pf_node_err(errs, v,
					    "%s.burst: only source stages take a burst; set the burst of the ring that feeds '%s' under rings:",
					    path, name);
			else
				pf_node_u32(v, key_path(kp, sizeof(kp), path, "burst"), 1,
					    PF_BURST_MAX, &sc->burst, errs);
		}
		if ((v = pf_map_get(sn, "instances")) != NULL)
			load_instances(t, sc, v, path, errs);
	}
	check_instance_names(t, stages, errs);
}

static int
edge_index(const struct pf_stage_ops *ops, const char *name)
{
	uint16_t e;

	for (e = 1; e < ops->n_edges; e++)
		if (strcmp(ops->edge_names[e], name) == 0)
			return e;
	return -1;
}

static void
wire_edge(struct pf_topo *t, struct pf_stage_conf *sc, uint16_t edge, const struct pf_node *target,
	  const char *path, struct pf_errs *errs)
{
	char qn[PF_NAME_MAX + 48];
	int to;

	if (target->kind != PF_NODE_SCALAR) {
		pf_node_err(errs, target, "%s: expected a stage name", path);
		return;
	}
	to = pf_topo_group_index(t, target->value);
	if (to < 0 && (to = pf_topo_stage_index(t, target->value)) >= 0) {
		pf_node_err(errs, target,
			    "%s: '%s' is an instance of '%s': name the stage, the fan-out picks the instance by flow",
			    path, target->value, t->stages[to].group);
		return;
	}
	if (to < 0) {
		pf_node_err(errs, target, "%s: edge to unknown stage %s", path,
			    quoted_name(target->value, qn, sizeof(qn)));
		return;
	}
	if (t->stages[to].ops != NULL && (t->stages[to].ops->flags & PF_STAGE_SOURCE)) {
		pf_node_err(errs, target, "%s: '%s' reads ports and cannot be fed by a ring", path,
			    target->value);
		return;
	}
	if (to == sc->first) {
		pf_node_err(errs, target, "pipeline has a cycle: %s -> %s", sc->group, sc->group);
		return;
	}
	sc->next[edge] = (uint16_t)to;
}

static void
wire_stages(struct pf_topo *t, struct pf_errs *errs)
{
	char path[PF_CONF_PATH_MAX], names[200];
	uint16_t s, e;
	uint32_t i;

	for (s = 0; s < t->n_stages; s++) {
		struct pf_stage_conf *sc = &t->stages[s];
		const struct pf_node *next;

		if (sc->ops == NULL || sc->node->kind != PF_NODE_MAP)
			continue;
		if (sc->instance > 0) {
			/* Instances share the edges of instance 0 (and its errors). */
			memcpy(sc->next, t->stages[sc->first].next, sizeof(sc->next));
			continue;
		}
		next = pf_map_get(sc->node, "next");
		snprintf(path, sizeof(path), "stages.%s.next", sc->group);
		if (next == NULL) {
			if (sc->ops->n_edges > 1 && !(sc->ops->flags & PF_STAGE_SINK))
				pf_node_err(errs, sc->node, "stages.%s: missing required key 'next'",
					    sc->group);
			continue;
		}
		if (sc->ops->n_edges <= 1) {
			pf_node_err(errs, next, "%s: stage type '%s' has no output edges", path,
				    sc->ops->type);
			continue;
		}
		if (next->kind == PF_NODE_SCALAR) {
			if (sc->ops->flags & PF_STAGE_NEXT_ALL) {
				wire_edge(t, sc, 1, next, path, errs);
				for (e = 2; e < sc->ops->n_edges; e++)
					if (!(sc->ops->next_all_skip & (1u << e)))
						sc->next[e] = sc->next[1];
			} else
				wire_edge(t, sc, sc->ops->default_edge, next, path, errs);
			continue;
		}
		if (next->kind != PF_NODE_MAP) {
			pf_node_err(errs, next, "%s: expected a stage name or a mapping of edge: stage",
				    path);
			continue;
		}
		names[0] = '\0';
		for (e = 1; e < sc->ops->n_edges; e++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 e > 1 ? ", " : "", sc->ops->edge_names[e]);
		for (i = 0; i < next->n; i++) {
			int ei = edge_index(sc->ops, next->keys[i]->value);
			char epath[PF_CONF_PATH_MAX + 40];

			if (ei < 0) {
				pf_node_err(errs, next->keys[i],
					    "%s: stage type '%s' has no edge '%s' (edges: %s)", path,
					    sc->ops->type, next->keys[i]->value, names);
				continue;
			}
			snprintf(epath, sizeof(epath), "%s.%s", path, next->keys[i]->value);
			wire_edge(t, sc, (uint16_t)ei, next->items[i], epath, errs);
		}
	}
}


/* Whether change @p k of @p ch is half of a pair that cancels out: a delete
 * whose nearest earlier change of the same key is an add, or that add (its
 * nearest later change of the key is a delete). */
static bool
change_cancelled(const struct pf_change *ch, unsigned int n, unsigned int k)
{
	unsigned int j;

	if (ch[k].del) {
		for (j = k; j-- > 0;)
			if (strcmp(ch[j].stage, ch[k].stage) == 0 &&
			    strcmp(ch[j].table, ch[k].table) == 0 && strcmp(ch[j].key, ch[k].key) == 0)
				return !ch[j].del;
		return false;
	}
	for (j = k + 1; j < n; j++)
		if (strcmp(ch[j].stage, ch[k].stage) == 0 && strcmp(ch[j].table, ch[k].table) == 0 &&
		    strcmp(ch[j].key, ch[k].key) == 0)
			return ch[j].del;
	return false;
}

/*
 * What sc->edits records for the changes @p ch[0..n) of YAML stage @p group:
 * a hash of its net changes (an add and a later delete of the same key
 * cancel out), 0 when none is left. Keys must be normalised (edit did it).
 */
static uint64_t
pf_changes_hash(const struct pf_change *ch, unsigned int n, const char *group)
{
	uint64_t h = 1469598103934665603ull;
	bool any = false;
	unsigned int k;
	const char *p;

	/* FNV-1a over what the stage differs by from its file: its net changes,
	 * so that an add and the delete that takes it back leave no trace. */
	for (k = 0; k < n; k++) {
		if (strcmp(ch[k].stage, group) != 0 || change_cancelled(ch, n, k))
			continue;
		any = true;
		for (p = ch[k].entry; *p != '\0'; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull;
		h = (h ^ (ch[k].del ? '-' : '+')) * 1099511628211ull;
	}
	return any ? h : 0;
}

/* Apply the live changes naming @p sc's YAML stage to its fresh config. */
static void
apply_changes(struct pf_stage_conf *sc, const struct pf_topo *t, const struct topo_edits *ed,
	      struct pf_errs *errs)
{
	unsigned int k;

	for (k = 0; k < ed->n; k++) {
		struct pf_change *ch = &ed->ch[k];

		if (strcmp(ch->stage, sc->group) != 0)
			continue;
		if (sc->ops->ctl.edit == NULL) {
			pf_node_err(errs, sc->node, "stages.%s: stage type '%s' has no live changes",
				    sc->group, sc->ops->type);
			return;
		}
		if (sc->ops->ctl.edit(sc, &t->env, ch, errs) < 0)
			return;
	}
	sc->edits = pf_changes_hash(ed->ch, ed->n, sc->group);
}

/* Append to @p dst the errors of @p src it does not hold yet (same place, same text). */
static void
errs_add_new(struct pf_errs *dst, const struct pf_errs *src)
{
	unsigned int i, j, n = RTE_MIN(dst->n, (unsigned int)PF_ERRS_MAX);

	for (i = 0; i < RTE_MIN(src->n, (unsigned int)PF_ERRS_MAX); i++) {
		const struct pf_err *e = &src->e[i];

		for (j = 0; j < n; j++)
			if (dst->e[j].line == e->line && dst->e[j].col == e->col &&
			    strcmp(dst->e[j].file, e->file) == 0 && strcmp(dst->e[j].msg, e->msg) == 0)
				break;
		if (j == n)
			pf_err_add(dst, e->file[0] != '\0' ? e->file : NULL, e->line, e->col, "%s",
				   e->msg);
	}
}

static void
parse_stage_params(struct pf_topo *t, const struct topo_edits *ed, struct pf_errs *errs)
{
	uint16_t s;

	for (s = 0; s < t->n_stages; s++) {
		struct pf_stage_conf *sc = &t->stages[s];

		char inst_name[PF_NAME_MAX];
		struct pf_errs *scratch;
		unsigned int e0;

		if (sc->ops == NULL || sc->node->kind != PF_NODE_MAP || sc->ops->ctl.parse == NULL)
			continue;
		/* Each instance gets its own config; messages name the YAML stage,
		 * once: an instance's errors that instance 0 already had are left
		 * out, one of its own (rx `queues[k]`) is kept. */
		memcpy(inst_name, sc->name, sizeof(inst_name));
		memcpy(sc->name, sc->group, sizeof(sc->name));
		scratch = sc->instance == 0 ? NULL : calloc(1, sizeof(*scratch));
		if (sc->instance != 0 && scratch == NULL) {
			pf_err_add(errs, t->file, 0, 0, "out of memory");
			continue;
		}
		e0 = errs->n;
		sc->ops->ctl.parse(sc, &t->env, scratch == NULL ? errs : scratch);
		if (sc->instance == 0)
			pf_stage_conf_files_check(sc, e0, errs);
		if (ed->n != 0 && errs->n == e0 && (scratch == NULL || scratch->n == 0))
			apply_changes(sc, t, ed, scratch == NULL ? errs : scratch);
		if (scratch != NULL)
			errs_add_new(errs, scratch);
		free(scratch);
		memcpy(sc->name, inst_name, sizeof(sc->name));
	}
}

/* ---- rings -------------------------------------------------------------- */

static void
ring_params(const struct pf_node *rn, const char *path, uint32_t *size, uint32_t *burst,
	    struct pf_errs *errs)
{
	const struct pf_node *v;
	uint64_t sz;

	if (pf_node_expect(rn, PF_NODE_MAP, path, errs) < 0)
		return;
	pf_map_check_keys(rn, path, ring_keys, errs);
	if ((v = pf_map_get(rn, "size")) != NULL) {
		char p[PF_CONF_PATH_MAX + 8];

		snprintf(p, sizeof(p), "%s.size", path);
		if (pf_node_u64(v, p, 0, UINT64_MAX, &sz, errs) == 0) {
			if (!is_pow2(sz) || sz < 2 || sz > (1ull << 31))
				pf_node_err(errs, v,
					    "%s=%" PRIu64 " must be a power of two in [2, 2147483648] (usable capacity is size-1)",
					    p, sz);
			else
				*size = (uint32_t)sz;
		}
	}
	if ((v = pf_map_get(rn, "burst")) != NULL) {
		char p[PF_CONF_PATH_MAX + 8];

		snprintf(p, sizeof(p), "%s.burst", path);
		pf_node_u32(v, p, 1, PF_BURST_MAX, burst, errs);
	}
}

/* "from->to" with the YAML stage names: the key that covers every instance ring. */
static const char *
ring_group_name(const struct pf_topo *t, const struct pf_ring_conf *rc, char *buf, size_t len)
{
	snprintf(buf, len, "%s->%s", t->stages[rc->from].group, t->stages[rc->to].group);
	return buf;
}

/*
 * rx `affine: true` carries on down the pipeline: a stage with N instances
 * fed only by affine stages of N instances is affine too, so instance k of
 * every stage after an affine rx stays on instance k (one lcore, no fan-out).
 * Inputs from single stages (icmp) do not count: they fan out by flow hash.
 */
static void
propagate_affine(struct pf_topo *t)
{
	bool changed = true;
	uint16_t s, r;

	while (changed) {
		changed = false;
		for (s = 0; s < t->n_stages; s++) {
			struct pf_stage_conf *sc = &t->stages[s];
			bool all = sc->n_instances > 1, any = false;

			if (sc->affine)
				continue;
			for (r = 0; all && r < t->n_rings; r++) {
				const struct pf_stage_conf *from = &t->stages[t->rings[r].from];

				if (t->rings[r].to != s)
					continue;
				/* A single producer (icmp, a slow path) picks by flow hash anyway. */
				if (from->n_instances == 1)
					continue;
				any = true;
				all = from->affine && from->n_instances == sc->n_instances;
			}
			if (all && any) {
				sc->affine = true;
				changed = true;
			}
		}
	}
}

/*
 * A stage with N instances none of whose inputs is an affine stage with N
 * instances gets its instance picked by flow hash on every input: a
 * producer with another instance count, or none, fans out by hash; one
 * with N fans out too, or is itself flow-picked and keeps the flow key
 * (PF_STAGE_KEEPS_FLOW), so it sends instance k's flows, which pick k, to
 * instance k. Either way instance k holds only flows that pick k, and when
 * it keeps their keys its own edges to N instances need no hash.
 */
static void
mark_flow_picked(struct pf_topo *t)
{
	uint16_t s, r;

	for (s = 0; s < t->n_stages; s++) {
		struct pf_stage_conf *sc = &t->stages[s];
		bool any = false, ok = true;

		for (r = 0; r < t->n_rings; r++) {
			const struct pf_stage_conf *from = &t->stages[t->rings[r].from];

			if (t->rings[r].to != s)
				continue;
			any = true;
			if (from->affine && from->n_instances == sc->n_instances)
				ok = false;
		}
		sc->flow_picked = sc->n_instances > 1 && !sc->affine && any && ok;
	}
}

/* Does instance k of @p sc send straight to instance k of a stage with as many? */
static bool
same_instance_edges(const struct pf_stage_conf *sc)
{
	return sc->affine || (sc->flow_picked && sc->ops != NULL &&
			      (sc->ops->flags & PF_STAGE_KEEPS_FLOW));
}

bool
pf_topo_same_instance_edge(const struct pf_topo *t, uint16_t from, uint16_t to)
{
	const struct pf_stage_conf *a = &t->stages[from], *b = &t->stages[to];

	return b->n_instances > 1 && b->n_instances == a->n_instances && same_instance_edges(a);
}

/* A ring between different instances where every edge stays on its instance: it exists, never carries. */
bool
pf_topo_ring_unused(const struct pf_topo *t, uint16_t r)
{
	const struct pf_ring_conf *rc = &t->rings[r];

	return pf_topo_same_instance_edge(t, rc->from, rc->to) &&
	       t->stages[rc->from].instance != t->stages[rc->to].instance;
}

static void
build_rings(struct pf_topo *t, const struct pf_node *rings, struct pf_errs *errs)
{
	const struct pf_node *def = pf_map_get(rings, "default");
	uint16_t s, e;
	uint32_t i;
	int pass;

	if (rings != NULL && pf_node_expect(rings, PF_NODE_MAP, "rings", errs) < 0)
		rings = NULL;
	if (def != NULL && rings != NULL)
		ring_params(def, "rings.default", &t->ring_size_default, &t->burst_default, errs);

	/* One ring per (producer, consumer) conf: an edge to a stage with
	 * instances gets a ring to each instance (the fan-out). */
	for (s = 0; s < t->n_stages; s++)
		for (e = 1; e < PF_MAX_EDGES; e++) {
			uint16_t to0 = t->stages[s].next[e], to, k;
			struct pf_ring_conf *rc;

			for (k = 0; to0 != PF_NONE && k < t->stages[to0].n_instances; k++) {
				to = (uint16_t)(to0 + k);
				if (pf_topo_ring_index(t, s, to) >= 0)
					continue;
				if (t->n_rings >= PF_MAX_RINGS) {
					pf_err_add(errs, t->file, 0, 0, "more than %d rings",
						   PF_MAX_RINGS);
					return;
				}
				rc = &t->rings[t->n_rings++];
				rc->from = s;
				rc->to = to;
				rc->size = t->ring_size_default;
				rc->burst = t->burst_default;
				strcpy(rc->name, t->stages[s].name);   /* names < PF_NAME_MAX */
				strcat(rc->name, "->");
				strcat(rc->name, t->stages[to].name);
				t->stages[to].n_inputs++;
			}
		}
	/* Source stages default to the ring default burst unless they set their own. */
	for (s = 0; s < t->n_stages; s++)
		if (t->stages[s].node != NULL && pf_map_get(t->stages[s].node, "burst") == NULL)
			t->stages[s].burst = t->burst_default;

	/* Keys name stages ("a->acl": every instance ring of the edge) or one
	 * instance ring ("a->acl.1"); the exact ones apply last, so they win. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; rings != NULL && i < rings->n; i++) {
			const char *key = rings->keys[i]->value;
			char path[PF_CONF_PATH_MAX], gname[sizeof(t->rings[0].name)];
			uint32_t size = 0, burst = 0;
			uint16_t r, hits = 0;
			bool exact = false;

			if (strcmp(key, "default") == 0)
				continue;
			for (r = 0; r < t->n_rings; r++)
				exact |= strcmp(t->rings[r].name, key) == 0;
			if (exact != (pass == 1))
				continue;
			snprintf(path, sizeof(path), "rings.%s", key);
			ring_params(rings->items[i], path, &size, &burst, errs);
			for (r = 0; r < t->n_rings; r++) {
				struct pf_ring_conf *rc = &t->rings[r];

				ring_group_name(t, rc, gname, sizeof(gname));
				if (strcmp(exact ? rc->name : gname, key) != 0)
					continue;
				hits++;
				if (size != 0)
					rc->size = size;
				if (burst != 0)
					rc->burst = burst;
			}
			if (hits == 0)
				pf_node_err(errs, rings->keys[i],
					    "rings: no edge '%s' in the pipeline (ring keys are 'from->to' stage names)",
					    key);
		}
	for (i = 0; i < t->n_rings; i++) {
		struct pf_ring_conf *rc = &t->rings[i];
		char gname[sizeof(rc->name)];
		const struct pf_node *rn = pf_map_get(rings, rc->name), *at;
		const char *key = rc->name;

		if (rn == NULL) {
			/* Set for the whole group (or by default): say it once, by group. */
			if (t->stages[rc->from].instance != 0 || t->stages[rc->to].instance != 0)
				continue;
			key = ring_group_name(t, rc, gname, sizeof(gname));
			rn = pf_map_get(rings, key);
		}
		at = rn ? pf_map_get(rn, "burst") : NULL;
		if (at == NULL)
			at = rn ? rn : (def ? def : rings);
		if (rc->burst > rc->size - 1)
			pf_node_err(errs, at,
				    "rings.%s.burst=%u exceeds usable capacity %u of ring '%s'",
				    key, rc->burst, rc->size - 1, key);
	}
}

/* ---- graph -------------------------------------------------------------- */

/* The value node under @p sc's "next" that names stage @p to (for marks). */
static const struct pf_node *
next_node(const struct pf_stage_conf *sc, const char *to)
{
	const struct pf_node *next = pf_map_get(sc->node, "next");
	uint32_t i;

	if (next != NULL && next->kind == PF_NODE_MAP)
		for (i = 0; i < next->n; i++)
			if (next->items[i]->kind == PF_NODE_SCALAR &&
			    strcmp(next->items[i]->value, to) == 0)
				return next->items[i];
	return next != NULL ? next : sc->node;
}

/* Depth-first search; on a cycle, closing[] is the edge (from, to) that closes it. */
static bool
find_cycle(const struct pf_topo *t, uint16_t s, uint8_t *state, uint16_t *stack, int depth,
	   char *out, size_t len, uint16_t *closing)
{
	uint16_t e, to;
	int i;

	state[s] = 1;
	stack[depth] = s;
	for (e = 1; e < PF_MAX_EDGES; e++) {
		to = t->stages[s].next[e];
		if (to == PF_NONE)
			continue;
		if (state[to] == 1) {
			int start = 0;

			for (i = 0; i <= depth; i++)
				if (stack[i] == to)
					start = i;
			out[0] = '\0';
			for (i = start; i <= depth; i++)
				snprintf(out + strlen(out), len - strlen(out), "%s -> ",
					 t->stages[stack[i]].group);
			snprintf(out + strlen(out), len - strlen(out), "%s", t->stages[to].group);
			closing[0] = s;
			closing[1] = to;
			return true;
		}
		if (state[to] == 0 && find_cycle(t, to, state, stack, depth + 1, out, len, closing))
			return true;
	}
	state[s] = 2;
	return false;
}

/* PF_CARRY_* bits in words, for the wiring messages. */
static const char *
carry_words(uint16_t m, char *buf, size_t len)
{
	static const char *const w[] = {
		"IPv4", "IPv6", "ARP", "other EtherTypes", "IPv4 packets owed an ICMP error",
		"IPv6 packets owed an ICMPv6 error", "IPv4 datagrams to fragment",
		"IPv4 packets waiting for ARP", "IPv6 packets and ND for the neighbour table",
		"routed packets", "packets for the host interfaces",
	};
	unsigned int b;

	buf[0] = '\0';
	for (b = 0; b < RTE_DIM(w); b++)
		if (m & (1u << b))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "",
				 w[b]);
	return buf;
}

/* The node that wires edge @p e of @p sc (to @p to), for marks. */
static const struct pf_node *
edge_node(const struct pf_stage_conf *sc, uint16_t e, const char *to)
{
	const struct pf_node *next = pf_map_get(sc->node, "next");
	uint32_t i;

	if (next != NULL && next->kind == PF_NODE_MAP)
		for (i = 0; i < next->n; i++)
			if (strcmp(next->keys[i]->value, sc->ops->edge_names[e]) == 0)
				return next->items[i];
	return next_node(sc, to);
}

/* What edge @p e of stage @p s carries, given what the stage takes in (@p in). */
static uint16_t
edge_carries(const struct pf_stage_conf *sc, uint16_t e, const uint16_t *in, uint16_t s)
{
	return sc->ops->ctl.edge_carries != NULL ? sc->ops->ctl.edge_carries[e] : in[s];
}

/*
 * Family and kind of every edge against what its stage takes: rx's ipv6
 * edge into lpm, lpm6's icmp edge into icmp, rx's ipv4 into ip4frag can
 * never work. What a pass-through stage (acl) carries is what reaches it.
 */
static void
check_carries(const struct pf_topo *t, struct pf_errs *errs)
{
	uint16_t in[PF_MAX_STAGES] = { 0 }, s, e, n, to, bad;
	char a[256], b[256];
	bool more = true;

	for (n = 0; more && n <= t->n_stages; n++) {
		more = false;
		for (s = 0; s < t->n_stages; s++)
			for (e = 1; e < t->stages[s].ops->n_edges; e++) {
				to = t->stages[s].next[e];
				if (to == PF_NONE ||
				    (in[to] | edge_carries(&t->stages[s], e, in, s)) == in[to])
					continue;
				in[to] |= edge_carries(&t->stages[s], e, in, s);
				more = true;
			}
	}
	for (s = 0; s < t->n_stages; s++) {
		const struct pf_stage_conf *sc = &t->stages[s];

		for (e = 1; sc->instance == 0 && e < sc->ops->n_edges; e++) {
			const struct pf_stage_conf *tc;

			to = sc->next[e];
			if (to == PF_NONE)
				continue;
			tc = &t->stages[to];
			bad = edge_carries(sc, e, in, s) & ~tc->ops->ctl.takes;
			if (tc->ops->ctl.takes == 0 || bad == 0)
				continue;
			pf_node_err(errs, edge_node(sc, e, tc->group),
				    "stages.%s.next.%s: the edge carries %s, and %s (type %s) takes only %s",
				    sc->group, sc->ops->edge_names[e], carry_words(bad, a, sizeof(a)),
				    tc->group, tc->ops->type,
				    carry_words(tc->ops->ctl.takes, b, sizeof(b)));
		}
	}
}

/* @p edges_known: every stage's type and next were read without error. */
static void
check_graph(struct pf_topo *t, bool edges_known, struct pf_errs *errs)
{
	uint8_t state[PF_MAX_STAGES] = { 0 };
	uint16_t stack[PF_MAX_STAGES], s, closing[2];
	char cyc[512];

	for (s = 0; s < t->n_stages; s++) {
		if (state[s] == 0 &&
		    find_cycle(t, s, state, stack, 0, cyc, sizeof(cyc), closing)) {
			pf_node_err(errs, next_node(&t->stages[closing[0]], t->stages[closing[1]].group),
				    "pipeline has a cycle: %s", cyc);
			break;
		}
	}
	for (s = 0; s < t->n_stages; s++)
		edges_known &= t->stages[s].ops != NULL;
	if (edges_known)
		check_carries(t, errs);
	/* A missing edge would make a false "no input" claim: only check a whole graph. */
	for (s = 0; s < t->n_stages && edges_known; s++) {
		const struct pf_stage_conf *sc = &t->stages[s];

		if (!(sc->ops->flags & PF_STAGE_SOURCE) && sc->n_inputs == 0 && sc->instance == 0)
			pf_node_err(errs, sc->node,
				    "stage '%s' has no input (no stage's next leads to it)", sc->group);
	}
}

/* ---- lcores ------------------------------------------------------------- */

/* Note the stages named under a refused lcore entry: they are not "unmapped". */
static void
mark_name(const struct pf_topo *t, const struct pf_node *it, bool *listed)
{
	int si, k;

	if (it->kind != PF_NODE_SCALAR)
		return;
	if ((si = pf_topo_stage_index(t, it->value)) >= 0)
		listed[si] = true;
	else if ((si = pf_topo_group_index(t, it->value)) >= 0)
		for (k = 0; k < t->stages[si].n_instances; k++)
			listed[si + k] = true;   /* already an error: no "not mapped" on top */
}

static void
mark_listed(const struct pf_topo *t, const struct pf_node *list, bool *listed)
{
	uint32_t j;

	mark_name(t, list, listed);
	for (j = 0; list->kind == PF_NODE_SEQ && j < list->n; j++)
		mark_name(t, list->items[j], listed);
}

static void
load_lcores(struct pf_topo *t, const struct pf_node *lc, struct pf_errs *errs)
{
	bool listed[PF_MAX_STAGES] = { false };
	char path[PF_CONF_PATH_MAX], qn[PF_NAME_MAX + 48];
	uint32_t i, j;
	uint16_t s;

	if (lc == NULL) {
		pf_err_add(errs, t->file, 0, 0, "missing required key 'lcores'");
		return;
	}
	if (pf_node_expect(lc, PF_NODE_MAP, "lcores", errs) < 0)
		return;
	for (i = 0; i < lc->n; i++) {
		const struct pf_node *k = lc->keys[i], *list = lc->items[i];
		struct pf_lcore_conf *l;
		uint64_t id;

		mark_listed(t, list, listed);
		if (!pf_parse_u64(k->value, &id)) {
			pf_node_err(errs, k, "lcores: '%s' is not an lcore number", k->value);
			continue;
		}
		if (id >= PF_MAX_LCORES) {
			pf_node_err(errs, k, "lcores: lcore %" PRIu64 " does not exist (lcore ids are 0-%d)",
				    id, PF_MAX_LCORES - 1);
			continue;
		}
		if (id == t->main_lcore) {
			pf_node_err(errs, k,
				    "lcores: lcore %" PRIu64 " is the main lcore (control, stats, signals); map stages to worker lcores",
				    id);
			continue;
		}
		for (j = 0; j < t->n_lcores; j++)
			if (t->lcores[j].id == id)
				break;
		l = &t->lcores[j];
		if (j == t->n_lcores) {
			t->n_lcores++;
			l->id = (unsigned int)id;
			l->node = k;
		}
		snprintf(path, sizeof(path), "lcores.%s", k->value);
		if (list->kind != PF_NODE_SEQ) {
			pf_node_err(errs, list, "%s: expected a list of stage names", path);
			continue;
		}
		for (j = 0; j < list->n; j++) {
			const struct pf_node *it = list->items[j];
			int si;

			if (it->kind != PF_NODE_SCALAR) {
				pf_node_err(errs, it, "lcores.%s[%u]: expected a stage name", k->value, j);
				continue;
			}
			si = pf_topo_stage_index(t, it->value);
			if (si < 0 && (si = pf_topo_group_index(t, it->value)) >= 0) {
				const struct pf_stage_conf *g = &t->stages[si];

				pf_node_err(errs, it,
					    "lcores.%s: stage '%s' runs as %u instances: map each by name (%s.0 .. %s.%u)",
					    k->value, it->value, g->n_instances, g->group, g->group,
					    g->n_instances - 1);
				continue;
			}
			if (si < 0) {
				pf_node_err(errs, it, "lcores.%s: unknown stage %s", k->value,
					    quoted_name(it->value, qn, sizeof(qn)));
				continue;
			}
			if (t->stages[si].lcore >= 0) {
				pf_node_err(errs, it, "lcores.%s: stage '%s' is already mapped to lcore %d",
					    k->value, it->value, t->stages[si].lcore);
				continue;
			}
			t->stages[si].lcore = (int)id;
			l->stages[l->n_stages++] = (uint16_t)si;
		}
	}
	for (s = 0; s < t->n_stages; s++)
		if (t->stages[s].lcore < 0 && !listed[s])
			pf_node_err(errs, lc, "lcores: stage '%s' is not mapped to any lcore",
				    t->stages[s].name);
}

/* ---- ports use, queues and mbufs ---------------------------------------- */

static void
check_port_use(struct pf_topo *t, struct pf_errs *errs)
{
	int16_t rx_owner[PF_MAX_PORTS][16];
	uint16_t s, i;

	memset(rx_owner, 0xff, sizeof(rx_owner));
	for (s = 0; s < t->n_stages; s++) {
		struct pf_stage_conf *sc = &t->stages[s];

		for (i = 0; i < sc->n_rx_ports; i++) {
			struct pf_port_conf *pc = &t->ports[sc->rx_ports[i]];
			int16_t *owner = &rx_owner[sc->rx_ports[i]][sc->rx_queue & 15];

			if (*owner >= 0) {
				pf_node_err(errs, sc->node, "port %s rxq %u is polled by both '%s' and '%s'",
					    pc->name, sc->rx_queue, t->stages[*owner].name, sc->name);
				continue;
			}
			*owner = (int16_t)s;
			if (pc->n_rxq < sc->rx_queue + 1)
				pc->n_rxq = sc->rx_queue + 1;
		}
		for (i = 0; i < sc->n_tx_ports; i++) {
			struct pf_port_conf *pc = &t->ports[sc->tx_ports[i]];

			sc->tx_queue[i] = pc->n_txq++;
		}
	}
}

static void
size_mempool(struct pf_topo *t, const struct pf_node *rt, struct pf_errs *errs)
{
	uint64_t rings = 0, rxd = 0, txd = 0, bursts = 0, preload = 0, cache, need;
	const struct pf_node *v = rt ? pf_map_get(rt, "mbufs") : NULL;
	uint16_t i;

	for (i = 0; i < t->n_rings; i++)
		if (!pf_topo_ring_unused(t, i))
			rings += t->rings[i].size - 1;
	for (i = 0; i < t->n_ports; i++) {
		/* net_af_xdp fills 2048 a queue whatever rxd says (DPDK 22.11, its fill ring). */
		uint32_t fill = strncmp(t->ports[i].device, "net_af_xdp", 10) == 0 ?
				RTE_MAX(t->ports[i].rxd, 2048u) : t->ports[i].rxd;

		rxd += (uint64_t)fill * t->ports[i].n_rxq;
		txd += (uint64_t)t->ports[i].txd * t->ports[i].n_txq;
		preload += t->ports[i].pcap_preload;
	}
	/* Each stage holds at most one burst in hand, sinks one more per port. */
	for (i = 0; i < t->n_stages; i++)
		bursts += 2ull * PF_BURST_MAX + (uint64_t)t->stages[i].n_tx_ports * PF_BURST_MAX;
	cache = (uint64_t)(t->n_lcores + 1) * MBUF_CACHE * 3 / 2;
	need = rings + rxd + txd + bursts + cache + preload;
	t->mbufs_required = (uint32_t)need;
	if (v != NULL) {
		uint32_t m;

		if (pf_node_u32(v, "runtime.mbufs", 1024, 1u << 26, &m, errs) == 0) {
			if (m < need)
				pf_node_err(errs, v,
					    "mempool size %u < required %" PRIu64 " (rings %" PRIu64 " + rxd %" PRIu64 " + txd %" PRIu64 " + bursts %" PRIu64 " + cache %" PRIu64 " + pcap preload %" PRIu64 ")",
					    m, need, rings, rxd, txd, bursts, cache, preload);
			t->mbufs = m;
		}
	} else {
		/* Headroom for in-flight replicas and stage-held packets. */
		t->mbufs = (uint32_t)RTE_MAX(need + need / 4, 8192ull);
	}
}

/*
 * runtime.idle_sleep_us when the file does not say: PIPEFWD_IDLE_SLEEP_US if
 * it is a number in range (a test harness or a shared lab machine sets it
 * for every run), else 0, pure polling.
 */
static uint32_t
idle_sleep_default(const struct pf_topo *t, struct pf_errs *errs)
{
	const char *e = getenv("PIPEFWD_IDLE_SLEEP_US");
	char *end;
	unsigned long v;

	if (e == NULL || *e == '\0')
		return 0;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno != 0 || *end != '\0' || *e == '-' || v > PF_IDLE_SLEEP_MAX_US) {
		pf_err_add(errs, t->file, 0, 0, "PIPEFWD_IDLE_SLEEP_US '%s': want microseconds, "
			   "0 to %u", e, PF_IDLE_SLEEP_MAX_US);
		return 0;
	}
	return (uint32_t)v;
}

static void
load_runtime(struct pf_topo *t, const struct pf_node *rt, struct pf_errs *errs)
{
	const struct pf_node *v;
	uint32_t u;
	int w;

	t->mbuf_data_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	t->tx_flush_us = 100;
	/* The environment's default only where the file says nothing. */
	if (rt == NULL || rt->kind != PF_NODE_MAP || pf_map_get(rt, "idle_sleep_us") == NULL)
		t->idle_sleep_us = idle_sleep_default(t, errs);
	if (rt == NULL || pf_node_expect(rt, PF_NODE_MAP, "runtime", errs) < 0)
		return;
	pf_map_check_keys(rt, "runtime", runtime_keys, errs);
	if ((v = pf_map_get(rt, "mbuf_size")) != NULL &&
	    pf_node_u32(v, "runtime.mbuf_size", 1024, 65535, &u, errs) == 0)
		t->mbuf_data_size = (uint16_t)u;
	if ((v = pf_map_get(rt, "tx_flush_us")) != NULL)
		pf_node_u32(v, "runtime.tx_flush_us", 1, 1000000, &t->tx_flush_us, errs);
	if ((v = pf_map_get(rt, "clock")) != NULL &&
	    pf_node_enum(v, "runtime.clock", clock_words, &w, errs) == 0)
		t->clock = (enum pf_clock_mode)w;
	if ((v = pf_map_get(rt, "backpressure")) != NULL)
		pf_node_bool(v, "runtime.backpressure", &t->backpressure, errs);
	if ((v = pf_map_get(rt, "latency")) != NULL)
		pf_node_bool(v, "runtime.latency", &t->latency, errs);
	if ((v = pf_map_get(rt, "idle_sleep_us")) != NULL)
		pf_node_u32(v, "runtime.idle_sleep_us", 0, PF_IDLE_SLEEP_MAX_US, &t->idle_sleep_us,
			    errs);
	if ((v = pf_map_get(rt, "hugepages")) != NULL &&
	    pf_node_enum(v, "runtime.hugepages", hugepage_words, &w, errs) == 0)
		t->hugepages = (enum pf_hugepages)w;
}

/* ---- entry points ------------------------------------------------------- */

void
pf_topo_free(struct pf_topo *t)
{
	uint16_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n_stages; i++) {
		if (t->stages[i].cfg != NULL && t->stages[i].ops->ctl.cfg_free != NULL)
			t->stages[i].ops->ctl.cfg_free(t->stages[i].cfg);
		pf_stage_conf_files_free(&t->stages[i]);
	}
	for (i = 0; i < t->eal_argc; i++)
		free(t->eal_argv[i]);
	pf_conf_free(t->doc);
	free(t);
}

static int
topo_load(const char *path, const char *text, size_t len, const struct topo_edits *ed,
	  struct pf_topo **out, struct pf_errs *errs)
{
	unsigned int before = errs->n, wire_errs;
	const struct pf_node *root, *rings;
	struct pf_topo *t;
	int rc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	memcpy(t->file, path, strnlen(path, sizeof(t->file) - 1));
	t->ring_size_default = PF_RING_SIZE_DEFAULT;
	t->burst_default = PF_BURST_DEFAULT;
	rc = text != NULL ? pf_conf_load_string(path, text, len, &t->doc, errs) :
			    pf_conf_load_file(path, &t->doc, errs);
	if (rc < 0)
		goto fail;
	root = t->doc->root;
	if (root == NULL || root->kind != PF_NODE_MAP) {
		if (root == NULL)
			pf_err_add(errs, path, 0, 0,
				   "configuration is empty; expected mapping with keys eal, ports, stages, rings, lcores");
		else
			pf_node_err(errs, root,
				    "configuration must be a mapping with keys eal, ports, stages, rings, lcores");
		goto fail;
	}
	/* Live port changes edit the tree: what runs is the file with them written
	 * in; the file itself is known by its hash (pf_reload_file_changed). */
	t->doc_hash = pf_node_hash(root);
	if (ed->n != 0 && pf_topo_port_changes(t->doc, ed->ch, ed->n, errs) < 0)
		goto fail;
	pf_map_check_keys(root, "", top_keys, errs);
	load_eal(t, pf_map_get(root, "eal"), errs);
	load_runtime(t, pf_map_get(root, "runtime"), errs);
	/* Ring defaults first: source stages inherit the default burst. */
	rings = pf_map_get(root, "rings");
	if (rings != NULL && rings->kind == PF_NODE_MAP && pf_map_get(rings, "default") != NULL) {
		struct pf_errs scratch = { 0 };

		ring_params(pf_map_get(rings, "default"), "rings.default", &t->ring_size_default,
			    &t->burst_default, &scratch);
	}
	load_ports(t, pf_map_get(root, "ports"), ed, errs);
	check_port_addrs(t, errs);
	/* What the stages' parse and ops see of it: complete from here on. */
	t->env = (struct pf_stage_env){
		.file = t->file,
		.n_ports = t->n_ports,
		.ports = t->ports,
		.clock = t->clock,
		.tx_flush_us = t->tx_flush_us,
	};
	load_stages(t, pf_map_get(root, "stages"), errs);
	wire_errs = errs->n;
	wire_stages(t, errs);
	wire_errs = errs->n - wire_errs;
	build_rings(t, rings, errs);
	parse_stage_params(t, ed, errs);
	propagate_affine(t);
	mark_flow_picked(t);
	check_graph(t, wire_errs == 0, errs);
	load_lcores(t, pf_map_get(root, "lcores"), errs);
	check_port_use(t, errs);
	pf_topo_load_sources(t, pf_map_get(root, "route_sources"), errs);
	size_mempool(t, pf_map_get(root, "runtime"), errs);
	if (errs->n != before)
		goto fail;
	*out = t;
	return 0;
fail:
	pf_topo_free(t);
	return -EINVAL;
}

int
pf_topo_load(const char *path, struct pf_topo **out, struct pf_errs *errs)
{
	static const struct topo_edits none;

	return topo_load(path, NULL, 0, &none, out, errs);
}

int
pf_topo_load_edited(const char *path, struct pf_change *ch, unsigned int n,
		    const struct pf_topo *running, struct pf_topo **out, struct pf_errs *errs)
{
	const struct topo_edits ed = { ch, n, running };

	return topo_load(path, NULL, 0, &ed, out, errs);
}

int
pf_topo_load_string(const char *name, const char *text, struct pf_topo **out,
		    struct pf_errs *errs)
{
	static const struct topo_edits none;

	return topo_load(name, text, strlen(text), &none, out, errs);
}

void
pf_topo_describe(const struct pf_topo *t, FILE *out)
{
	uint16_t i, j;

	fprintf(out, "%s: ok: %u ports, %u stages, %u rings, %u worker lcores, %u mbufs (%u required)\n",
		t->file, topo_ports_present(t), t->n_stages, t->n_rings, t->n_lcores, t->mbufs,
		t->mbufs_required);
	for (i = 0; i < t->n_rings; i++)
		fprintf(out, "  ring %-24s size %-6u burst %u%s\n", t->rings[i].name,
			t->rings[i].size, t->rings[i].burst,
			pf_topo_ring_unused(t, i) ? "  (unused: same instance)" : "");
	if (t->backpressure)
		fprintf(out, "  lossless: runtime.backpressure (stages take only what their rings hold)\n");
	for (i = 0; i < t->n_lcores; i++) {
		fprintf(out, "  lcore %u:", t->lcores[i].id);
		for (j = 0; j < t->lcores[i].n_stages; j++)
			fprintf(out, " %s", t->stages[t->lcores[i].stages[j]].name);
		fprintf(out, "\n");
	}
}
