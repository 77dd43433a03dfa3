/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port plan (app/runtime/pf_portplan.h) on fake device capability sets:
 * with and without RSS, with and without checksum offload, fast free only
 * where it is safe; the symmetric key really is symmetric; the redirection
 * table is even. And runtime.hugepages (app/runtime/pf_hugepages.h) on fake
 * /proc files, --check's NUMA warnings on a fake sysfs, and the socket of
 * each table and ring on a fake lcore -> socket map. No EAL: all are pure
 * functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_thash.h>

#include "pf_hugepages.h"
#include "pf_numa.h"
#include "pf_portplan.h"
#include "pf_test.h"

/* A NIC with RSS (hash types beyond ours too), checksum offload and fast free. */
static struct rte_eth_dev_info
nic(void)
{
	struct rte_eth_dev_info info;

	memset(&info, 0, sizeof(info));
	info.max_rx_queues = 16;
	info.max_tx_queues = 16;
	info.flow_type_rss_offloads = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP |
				      RTE_ETH_RSS_SCTP;
	info.reta_size = 128;
	info.hash_key_size = 40;
	info.rx_offload_capa = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
			       RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	info.tx_offload_capa = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	return info;
}

/* net_ring-like: queues, no RSS, no offloads. */
static struct rte_eth_dev_info
plain(void)
{
	struct rte_eth_dev_info info;

	memset(&info, 0, sizeof(info));
	info.max_rx_queues = 16;
	info.max_tx_queues = 16;
	return info;
}

static const struct pf_port_want want2 = {
	.n_rxq = 2, .n_txq = 2, .rss = PF_RSS_SYMMETRIC, .offloads = true, .fast_free_ok = true,
};

static void
test_rss_nic(void **state)
{
	struct rte_eth_dev_info info = nic();
	struct pf_port_plan p;
	char d[256];
	uint8_t k;

	(void)state;
	assert_int_equal(pf_port_plan(&info, &want2, &p), 0);
	assert_int_equal(p.n_rxq, 2);
	assert_int_equal(p.n_txq, 2);
	/* Ours only: IPv4/IPv6 with TCP/UDP ports, never SCTP or fragments. */
	assert_true(p.rss_hf == PF_RSS_HF);
	assert_int_equal(p.rss_key_len, 40);
	for (k = 0; k < 40; k++)
		assert_int_equal(p.rss_key[k], k & 1 ? 0x5a : 0x6d);
	assert_int_equal(p.reta_size, 128);
	/* The IPv4 header verdict only: a router forwards bad L4 checksums untouched. */
	assert_true(p.rx_offloads == RTE_ETH_RX_OFFLOAD_IPV4_CKSUM);
	assert_true(p.tx_offloads == RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	assert_string_equal(p.note, "");
	pf_port_plan_describe(&p, d, sizeof(d));
	assert_non_null(strstr(d, "rss(ipv4 ipv4-tcp ipv4-udp ipv6 ipv6-tcp ipv6-udp key symmetric"));
	assert_non_null(strstr(d, "rx-ipv4-cksum"));
	assert_non_null(strstr(d, "tx-fast-free"));
}

/* A device without RSS: one queue and a note that says why. */
static void
test_no_rss(void **state)
{
	struct rte_eth_dev_info info = plain();
	struct pf_port_plan p;
	char d[256];

	(void)state;
	assert_int_equal(pf_port_plan(&info, &want2, &p), 0);
	assert_int_equal(p.n_rxq, 1);
	assert_int_equal(p.n_txq, 2);
	assert_true(p.rss_hf == 0);
	assert_non_null(strstr(p.note, "device offers no RSS: 2 rx queues asked, 1 configured"));
	assert_true(p.rx_offloads == 0 && p.tx_offloads == 0);
	pf_port_plan_describe(&p, d, sizeof(d));
	assert_string_equal(d, "rxq 1 txq 2 no offloads");
}

/* RSS that offers none of our hash types counts as no RSS. */
static void
test_rss_other_types_only(void **state)
{
	struct rte_eth_dev_info info = nic();
	struct pf_port_plan p;

	(void)state;
	info.flow_type_rss_offloads = RTE_ETH_RSS_L2_PAYLOAD;
	assert_int_equal(pf_port_plan(&info, &want2, &p), 0);
	assert_int_equal(p.n_rxq, 1);
	assert_true(p.rss_hf == 0);
	assert_true(p.note[0] != '\0');
}

static void
test_rss_modes(void **state)
{
	struct rte_eth_dev_info info = nic();
	struct pf_port_want w = want2;
	struct pf_port_plan p;

	(void)state;
	w.rss = PF_RSS_DEVICE;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_int_equal(p.n_rxq, 2);
	assert_true(p.rss_hf == PF_RSS_HF);
	assert_int_equal(p.rss_key_len, 0);        /* the device keeps its key */
	w.rss = PF_RSS_OFF;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_int_equal(p.n_rxq, 1);
	assert_true(p.rss_hf == 0);
	assert_non_null(strstr(p.note, "rss: off"));
	/* external: the device fills its queues itself (net_pcap files): keep them, no hash. */
	info = plain();
	w.rss = PF_RSS_EXTERNAL;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.n_rxq == 2 && p.rss_hf == 0 && p.note[0] == '\0');
	info = nic();
	/* One queue wanted: no RSS at all, nothing to say. */
	w = want2;
	w.n_rxq = 1;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.rss_hf == 0 && p.n_rxq == 1 && p.note[0] == '\0');
	/* A 52-byte key device (i40e) gets a 52-byte symmetric key. */
	info.hash_key_size = 52;
	assert_int_equal(pf_port_plan(&info, &want2, &p), 0);
	assert_int_equal(p.rss_key_len, 52);
	assert_int_equal(p.rss_key[51], 0x5a);
}

/* Checksum offload only when offered and not turned off; fast free only when safe. */
static void
test_offloads(void **state)
{
	struct rte_eth_dev_info info = nic();
	struct pf_port_want w = want2;
	struct pf_port_plan p;

	(void)state;
	info.rx_offload_capa = RTE_ETH_RX_OFFLOAD_UDP_CKSUM;   /* no IPv4 header checksum */
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.rx_offloads == 0);
	info = nic();
	w.offloads = false;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.rx_offloads == 0 && p.tx_offloads == 0);
	w = want2;
	w.fast_free_ok = false;                 /* l2fib floods with refcounts */
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.rx_offloads == RTE_ETH_RX_OFFLOAD_IPV4_CKSUM);
	assert_true(p.tx_offloads == 0);
	info.tx_offload_capa = 0;
	w.fast_free_ok = true;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_true(p.tx_offloads == 0);
}

static void
test_too_many_queues(void **state)
{
	struct rte_eth_dev_info info = nic();
	struct pf_port_want w = want2;
	struct pf_port_plan p;

	(void)state;
	info.max_tx_queues = 1;
	assert_int_equal(pf_port_plan(&info, &w, &p), -EINVAL);
	info = nic();
	info.max_rx_queues = 1;
	assert_int_equal(pf_port_plan(&info, &w, &p), -EINVAL);
	/* Without RSS the extra rx queues are dropped first: one queue fits. */
	info = plain();
	info.max_rx_queues = 1;
	assert_int_equal(pf_port_plan(&info, &w, &p), 0);
	assert_int_equal(p.n_rxq, 1);
}

/*
 * The 0x6d5a key gives the same Toeplitz hash with source and destination
 * swapped (the default Microsoft key does not), so both directions of a flow
 * reach one queue: what acl sessions rely on.
 */
static void
test_symmetric_key(void **state)
{
	static const uint8_t ms_key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
		0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
		0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	struct rte_eth_dev_info info = nic();
	struct pf_port_plan p;
	unsigned int i, q[2] = { 0 }, asym = 0;

	(void)state;
	assert_int_equal(pf_port_plan(&info, &want2, &p), 0);
	srand(17);
	for (i = 0; i < 4096; i++) {
		uint32_t a = (uint32_t)rand(), b = (uint32_t)rand();
		uint16_t sp = (uint16_t)rand(), dp = (uint16_t)rand();
		uint32_t fwd[3] = { a, b, (uint32_t)sp << 16 | dp };
		uint32_t rev[3] = { b, a, (uint32_t)dp << 16 | sp };
		uint32_t h = rte_softrss(fwd, 3, p.rss_key);

		assert_int_equal(h, rte_softrss(rev, 3, p.rss_key));
		q[h % 128 % 2]++;                   /* reta entry i -> queue i % 2 */
		asym += rte_softrss(fwd, 3, ms_key) != rte_softrss(rev, 3, ms_key);
	}
	/* Flows still spread: each queue gets 45-55 %. */
	assert_true(q[0] > 4096 * 45 / 100 && q[1] > 4096 * 45 / 100);
	assert_true(asym > 4000);
}

static void
test_reta_even(void **state)
{
	struct rte_eth_rss_reta_entry64 reta[8];
	unsigned int cnt[4] = { 0 }, i;

	(void)state;
	memset(reta, 0, sizeof(reta));
	pf_port_reta_fill(reta, 128, 3);
	for (i = 0; i < 128; i++) {
		assert_true(reta[i / 64].mask & (1ull << (i % 64)));
		cnt[reta[i / 64].reta[i % 64]]++;
	}
	assert_int_equal(cnt[0], 43);
	assert_int_equal(cnt[1], 43);
	assert_int_equal(cnt[2], 42);
	assert_true(reta[2].mask == 0);         /* nothing past reta_size */
	memset(reta, 0, sizeof(reta));
	pf_port_reta_fill(reta, 512, 2);
	for (i = 0; i < 512; i++)
		assert_int_equal(reta[i / 64].reta[i % 64], i % 2);
}

/* ---- runtime.hugepages -------------------------------------------------- */

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
huge_info(const char *meminfo, const char *mounts, struct pf_huge_info *hi)
{
	char dir[] = "/tmp/pf_huge_XXXXXX", mi[64], mo[64];

	assert_non_null(mkdtemp(dir));
	snprintf(mi, sizeof(mi), "%s/meminfo", dir);
	snprintf(mo, sizeof(mo), "%s/mounts", dir);
	write_file(mi, meminfo);
	write_file(mo, mounts);
	assert_int_equal(pf_huge_read(mi, mo, hi), 0);
	unlink(mi);
	unlink(mo);
	rmdir(dir);
}

#define MEM_NONE "MemTotal: 4000000 kB\nHugePages_Total:       0\nHugePages_Free:        0\n" \
		 "Hugepagesize:       2048 kB\n"
#define MEM_300 "HugePages_Total:     300\nHugePages_Free:      300\nHugePages_Rsvd:   0\n" \
		"Hugepagesize:       2048 kB\n"
#define MOUNTED "proc /proc proc rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n"

static void
test_hugepages(void **state)
{
	char *m512[] = { (char *)"--no-pci", (char *)"-m", (char *)"512" };
	char *m1024[] = { (char *)"-m1024" };
	char *nohuge[] = { (char *)"--no-huge", (char *)"-m", (char *)"512" };
	struct pf_huge_info hi;
	struct pf_huge_decision d;

	(void)state;
	huge_info(MEM_300, MOUNTED, &hi);
	assert_true(hi.free_pages == 300 && hi.page_kb == 2048 && hi.mounted);
	/* auto, 600 MB free, -m 512: hugepages, nothing added. */
	pf_huge_decide(PF_HUGE_AUTO, &hi, m512, 3, &d);
	assert_true(d.huge && !d.add_nohuge && !d.add_mem);
	/* auto, -m asks more than is free: --no-huge, the -m stays. */
	pf_huge_decide(PF_HUGE_AUTO, &hi, m1024, 1, &d);
	assert_true(!d.huge && d.add_nohuge && !d.add_mem);
	/* An explicit --no-huge wins over everything. */
	pf_huge_decide(PF_HUGE_ON, &hi, nohuge, 3, &d);
	assert_true(!d.huge && !d.add_nohuge && !d.add_mem);
	pf_huge_decide(PF_HUGE_OFF, &hi, m512, 3, &d);
	assert_true(!d.huge && d.add_nohuge && !d.add_mem);
	/* No size given: --no-huge -m 512. */
	pf_huge_decide(PF_HUGE_OFF, &hi, NULL, 0, &d);
	assert_true(d.add_nohuge && d.add_mem);
	assert_string_equal(d.mem_arg, "512");
	/* Free pages but no hugetlbfs mounted: EAL could not map them. */
	huge_info(MEM_300, "proc /proc proc rw 0 0\n", &hi);
	pf_huge_decide(PF_HUGE_AUTO, &hi, m512, 3, &d);
	assert_true(!d.huge && d.add_nohuge);
	assert_non_null(strstr(d.why, "no hugetlbfs mounted"));
	/* This machine's state: none reserved. */
	huge_info(MEM_NONE, MOUNTED, &hi);
	pf_huge_decide(PF_HUGE_AUTO, &hi, NULL, 0, &d);
	assert_true(!d.huge && d.add_nohuge && d.add_mem);
	/* on: hugepages even when none are free (EAL then fails and says so). */
	pf_huge_decide(PF_HUGE_ON, &hi, NULL, 0, &d);
	assert_true(d.huge && !d.add_nohuge);
}

/* ---- --check's NUMA warnings on a fake two-socket sysfs ----------------- */

static void
mkdirs(const char *root, const char *rel)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

/*
 * A fake sysfs in @p root (a mkdtemp template): CPUs 0-1 on node 0, 2-3 on
 * node 1, PCI 03:00.0 on node 0, 81:00.0 on node 1.
 */
static void
fake_sysfs(char *root)
{
	char path[256];

	assert_non_null(mkdtemp(root));
	mkdirs(root, "devices/system/cpu/cpu0/node0");
	mkdirs(root, "devices/system/cpu/cpu1/node0");
	mkdirs(root, "devices/system/cpu/cpu2/node1");
	mkdirs(root, "devices/system/cpu/cpu3/node1");
	mkdirs(root, "bus/pci/devices/0000:03:00.0");
	mkdirs(root, "bus/pci/devices/0000:81:00.0");
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/numa_node", root);
	write_file(path, "0\n");
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:81:00.0/numa_node", root);
	write_file(path, "1\n");
}

static void
test_numa_check(void **state)
{
	static const char topo_text[] =
		"eal: [-l, 0-3, --no-huge]\n"
		"ports:\n"
		"  p0: { device: \"0000:03:00.0\" }\n"
		"  p1: { device: \"81:00.0\" }\n"
		"  p2: { device: net_null0 }\n"
		"stages:\n"
		"  rx: { type: rx, ports: [p0, p1, p2], next: tx }\n"
		"  tx: { type: tx, ports: [p0, p1, p2] }\n"
		"lcores:\n"
		"  2: [rx]\n"
		"  3: [tx]\n";
	char root[] = "/tmp/pf_sys_XXXXXX", cmd[300], *buf = NULL;
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	fake_sysfs(root);
	assert_int_equal(pf_topo_load_string("numa.yaml", topo_text, &topo, &errs), 0);
	/* rx (lcore 2, socket 1) polls p0 on socket 0; p1 is local; p2 a vdev. */
	out = open_memstream(&buf, &len);
	assert_int_equal(pf_numa_check(topo, root, out), 1);
	fclose(out);
	assert_non_null(strstr(buf, "stage rx on lcore 2 (socket 1) polls port p0 on socket 0"));
	free(buf);
	pf_topo_free(topo);
	/* tx moved to lcore 1 (socket 0): the ring rx->tx crosses too. */
	topo = NULL;
	{
		char moved[sizeof(topo_text)];

		memcpy(moved, topo_text, sizeof(moved));
		*strstr(moved, "3: [tx]") = '1';
		assert_int_equal(pf_topo_load_string("numa.yaml", moved, &topo, &errs), 0);
	}
	buf = NULL;
	out = open_memstream(&buf, &len);
	assert_int_equal(pf_numa_check(topo, root, out), 2);
	fclose(out);
	assert_non_null(strstr(buf, "ring rx->tx crosses sockets (rx on socket 1, tx on socket 0)"));
	free(buf);
	pf_topo_free(topo);
	/* Floating lcores (no -l): nothing is known, nothing warns. */
	topo = NULL;
	assert_int_equal(pf_topo_load_string("numa.yaml", strchr(topo_text, '\n') + 1, &topo,
					     &errs), 0);
	out = fopen("/dev/null", "w");
	assert_int_equal(pf_numa_check(topo, root, out), 0);
	fclose(out);
	pf_topo_free(topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* ---- where tables and rings go: a fake lcore -> socket map -------------- */

/* Lcores 0-1 on socket 0, 2-3 on socket 1, 4 unknown (not enabled). */
static int
fake_socket(unsigned int lcore, void *arg)
{
	static const int map[] = { 0, 0, 1, 1, -1 };

	(void)arg;
	return lcore < RTE_DIM(map) ? map[lcore] : -1;
}

/* A router: two lpm instances on both sockets, their neighbour table, a shared l2fib. */
static const char router_text[] =
	"eal: [-l, 0-4, --no-huge]\n"
	"ports:\n"
	"  p0: { device: \"0000:03:00.0\", mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n"
	"  p1: { device: \"0000:81:00.0\", mac: \"02:00:00:00:00:11\", ipv4: 10.20.0.1/16 }\n"
	"  p2: { device: net_null0 }\n"
	"  p3: { device: net_null1 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: neigh } }\n"
	"  lpm:\n"
	"    type: lpm\n"
	"    instances: 2\n"
	"    nexthops: { gw: { via: 192.168.0.9 } }\n"
	"    routes: [ { prefix: 0.0.0.0/0, via: gw } ]\n"
	"    next: { out: tx, neigh: neigh }\n"
	"  neigh: { type: neigh, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"  rx2: { type: rx, ports: [p2, p3], next: l2 }\n"
	"  l2: { type: l2fib, instances: 2, ports: [p2, p3], next: tx2 }\n"
	"  tx2: { type: tx, ports: [p2, p3] }\n"
	"lcores:\n"
	"  2: [rx, lpm.0, rx2, l2.0]\n"
	"  1: [lpm.1, neigh, tx, l2.1]\n"
	"  4: [tx2]\n";

static uint16_t
stage_index(const struct pf_topo *topo, const char *name)
{
	uint16_t s;

	for (s = 0; s < topo->n_stages; s++)
		if (strcmp(topo->stages[s].name, name) == 0)
			return s;
	fail_msg("no stage %s", name);
	return 0;
}

static int
ring_index(const struct pf_topo *topo, const char *name)
{
	uint16_t r;

	for (r = 0; r < topo->n_rings; r++)
		if (strcmp(topo->rings[r].name, name) == 0)
			return r;
	return -1;
}

static void
test_numa_sockets(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	int r;

	(void)state;
	assert_int_equal(pf_topo_load_string("numa.yaml", router_text, &topo, &errs), 0);
	/* Each instance's own tables: its lcore's socket. */
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "lpm.0"), fake_socket, NULL),
			 1);
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "lpm.1"), fake_socket, NULL),
			 0);
	/* The neighbour table: the first lpm instance's socket (it reads it), not neigh's own. */
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "neigh"), fake_socket, NULL),
			 1);
	/* One l2fib table for both instances: instance 0's socket. */
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "l2.0"), fake_socket, NULL),
			 1);
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "l2.1"), fake_socket, NULL),
			 1);
	/* An lcore of unknown socket: unknown. */
	assert_int_equal(pf_numa_table_socket(topo, stage_index(topo, "tx2"), fake_socket, NULL),
			 -1);
	/* A ring: its consumer's socket. */
	r = ring_index(topo, "lpm.1->neigh");
	assert_true(r >= 0);
	assert_int_equal(pf_numa_ring_socket(topo, (uint16_t)r, fake_socket, NULL), 0);
	r = ring_index(topo, "lpm.0->tx");
	assert_true(r >= 0);
	assert_int_equal(pf_numa_ring_socket(topo, (uint16_t)r, fake_socket, NULL), 0);
	r = ring_index(topo, "l2.1->tx2");
	assert_true(r >= 0);
	assert_int_equal(pf_numa_ring_socket(topo, (uint16_t)r, fake_socket, NULL), -1);
	pf_topo_free(topo);
}

/* --check on the router: the readers of a table on the other socket warn. */
static unsigned int
count(const char *text, const char *what)
{
	unsigned int n = 0;

	while ((text = strstr(text, what)) != NULL) {
		n++;
		text++;
	}
	return n;
}

/* pf_numa_check's warnings on topology @p text with sysfs @p root (free them). */
static char *
numa_warnings(const char *text, const char *root)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	assert_int_equal(pf_topo_load_string("numa.yaml", text, &topo, &errs), 0);
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	pf_numa_check(topo, root, out);
	fclose(out);
	pf_topo_free(topo);
	return buf;
}

static void
test_numa_check_tables(void **state)
{
	char root[] = "/tmp/pf_sys_XXXXXX", cmd[300], *buf;

	(void)state;
	fake_sysfs(root);
	buf = numa_warnings(router_text, root);
	assert_non_null(strstr(buf, "warning: stage lpm.1 on lcore 1 (socket 0) reads the table of "
				    "stage neigh on socket 1: every lookup crosses sockets\n"));
	assert_non_null(strstr(buf, "warning: stage l2.1 on lcore 1 (socket 0) reads the table of "
				    "stage l2.0 on socket 1: every lookup crosses sockets\n"));
	/* Own tables, a reader on the table's socket, rx (feeds neigh, reads nothing): silent. */
	assert_null(strstr(buf, "stage lpm.0 on lcore 2 (socket 1) reads"));
	assert_null(strstr(buf, "stage rx on lcore 2 (socket 1) reads"));
	assert_null(strstr(buf, "stage neigh on lcore"));
	assert_int_equal(count(buf, "reads the table"), 2);
	free(buf);
	/* Everything on socket 1 (lcores 2 and 3): no table warning. */
	{
		char moved[sizeof(router_text)];

		memcpy(moved, router_text, sizeof(moved));
		*strstr(moved, "1: [lpm.1") = '3';
		buf = numa_warnings(moved, root);
		assert_int_equal(count(buf, "reads the table"), 0);
		free(buf);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rss_nic),
		cmocka_unit_test(test_no_rss),
		cmocka_unit_test(test_rss_other_types_only),
		cmocka_unit_test(test_rss_modes),
		cmocka_unit_test(test_offloads),
		cmocka_unit_test(test_too_many_queues),
		cmocka_unit_test(test_symmetric_key),
		cmocka_unit_test(test_reta_even),
		cmocka_unit_test(test_hugepages),
		cmocka_unit_test(test_numa_check),
		cmocka_unit_test(test_numa_sockets),
		cmocka_unit_test(test_numa_check_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
