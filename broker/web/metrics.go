package web

import (
	"fmt"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"sort"
	"strconv"
	"strings"
)

// GET /metrics: Prometheus text exposition, with upstream's metric names and labels (cluster,
// namespace, topic, subscription) at topic level, as upstream with
// exposeTopicLevelMetricsInPrometheus=true (its default).

type metricFamily struct {
	name, help, typ string
	lines           []string
}

type metrics struct {
	families map[string]*metricFamily
	order    []string
}

func (m *metrics) add(name, typ, help string, labels [][2]string, v float64) {
	f := m.families[name]
	if f == nil {
		f = &metricFamily{name: name, help: help, typ: typ}
		m.families[name] = f
		m.order = append(m.order, name)
	}
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l[0] + "=" + strconv.Quote(l[1]))
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	f.lines = append(f.lines, b.String())
}

func (s *Server) metricsRoutes(rt *router) {
	rt.handle("GET /metrics", s.metrics)
	rt.handle("GET /metrics/", s.metrics)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	cluster := s.b.Config().ClusterName
	m := &metrics{families: map[string]*metricFamily{}}
	m.add("pulsar_active_connections", "gauge", "Client connections open.", [][2]string{{"cluster", cluster}}, float64(s.b.ConnectionCount()))
	s.processMetrics(m, cluster)
	all := s.b.BrokerTopicStats()
	nss := make([]string, 0, len(all))
	for ns := range all {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		topicCount := 0
		for _, bundle := range all[ns] {
			for _, domain := range bundle {
				names := make([]string, 0, len(domain))
				for t := range domain {
					names = append(names, t)
				}
				sort.Strings(names)
				for _, t := range names {
					topicCount++
					st := domain[t]
					l := [][2]string{{"cluster", cluster}, {"namespace", ns}, {"topic", t}}
					consumers := 0
					backlog := int64(0)
					for _, sub := range st.Subscriptions {
						consumers += len(sub.Consumers)
						backlog += sub.MsgBacklog
					}
					m.add("pulsar_subscriptions_count", "gauge", "Subscriptions of the topic.", l, float64(len(st.Subscriptions)))
					m.add("pulsar_producers_count", "gauge", "Producers of the topic.", l, float64(len(st.Publishers)))
					m.add("pulsar_consumers_count", "gauge", "Consumers of the topic.", l, float64(consumers))
					m.add("pulsar_rate_in", "gauge", "Messages per second published.", l, st.MsgRateIn)
					m.add("pulsar_rate_out", "gauge", "Messages per second dispatched.", l, st.MsgRateOut)
					m.add("pulsar_throughput_in", "gauge", "Bytes per second published.", l, st.MsgThroughputIn)
					m.add("pulsar_throughput_out", "gauge", "Bytes per second dispatched.", l, st.MsgThroughputOut)
					m.add("pulsar_storage_size", "gauge", "Bytes stored.", l, float64(st.StorageSize))
					m.add("pulsar_msg_backlog", "gauge", "Entries not yet acknowledged, summed over subscriptions.", l, float64(backlog))
					m.add("pulsar_in_messages_total", "counter", "Messages published.", l, float64(st.MsgInCounter))
					m.add("pulsar_in_bytes_total", "counter", "Bytes published.", l, float64(st.BytesInCounter))
					m.add("pulsar_out_messages_total", "counter", "Messages dispatched.", l, float64(st.MsgOutCounter))
					m.add("pulsar_out_bytes_total", "counter", "Bytes dispatched.", l, float64(st.BytesOutCounter))
					subs := make([]string, 0, len(st.Subscriptions))
					for sub := range st.Subscriptions {
						subs = append(subs, sub)
					}
					sort.Strings(subs)
					for _, sub := range subs {
						ss := st.Subscriptions[sub]
						sl := append(l[:3:3], [2]string{"subscription", sub})
						m.add("pulsar_subscription_back_log", "gauge", "Entries not yet acknowledged.", sl, float64(ss.MsgBacklog))
						m.add("pulsar_subscription_delayed", "gauge", "Messages waiting for their delivery time.", sl, float64(ss.MsgDelayed))
						m.add("pulsar_subscription_unacked_messages", "gauge", "Messages delivered and not acknowledged.", sl, float64(ss.UnackedMessages))
						m.add("pulsar_subscription_msg_rate_out", "gauge", "Messages per second dispatched.", sl, ss.MsgRateOut)
						m.add("pulsar_subscription_msg_throughput_out", "gauge", "Bytes per second dispatched.", sl, ss.MsgThroughputOut)
						m.add("pulsar_subscription_msg_rate_redeliver", "gauge", "Messages per second redelivered.", sl, ss.MsgRateRedeliver)
						m.add("pulsar_subscription_msg_ack_rate", "gauge", "Messages per second acknowledged.", sl, ss.MessageAckRate)
						m.add("pulsar_subscription_consumers_count", "gauge", "Consumers of the subscription.", sl, float64(len(ss.Consumers)))
					}
				}
			}
		}
		m.add("pulsar_topics_count", "gauge", "Topics of the namespace.", [][2]string{{"cluster", cluster}, {"namespace", ns}}, float64(topicCount))
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	for _, name := range m.order {
		f := m.families[name]
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, line := range f.lines {
			fmt.Fprintln(w, line)
		}
	}
}

// processMetrics adds the process's own figures: the Go runtime's, under the names Prometheus's
// Go collector gives them (upstream's are the JVM's), and letterbox's memory budget (an
// extension: upstream has none). Heap figures are as of the last garbage collection's work,
// not after a forced one: forcing one per scrape would cost a large heap dearly.
func (s *Server) processMetrics(m *metrics, cluster string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	none := [][2]string(nil)
	m.add("go_goroutines", "gauge", "Number of goroutines that currently exist.", none, float64(runtime.NumGoroutine()))
	m.add("go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and still in use.", none, float64(ms.HeapAlloc))
	m.add("go_memstats_heap_inuse_bytes", "gauge", "Number of heap bytes that are in use.", none, float64(ms.HeapInuse))
	m.add("go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system.", none, float64(ms.Sys))
	// When the last collection ended and what it found live, so that a reader can tell heap
	// figures taken after a collection from ones inflated by garbage; and the collector's
	// settings (GOGC, GOMEMLIMIT), which those figures depend on.
	m.add("go_memstats_last_gc_time_seconds", "gauge", "Number of seconds since 1970 of last garbage collection.", none, float64(ms.LastGC)/1e9)
	rm := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	rtmetrics.Read(rm)
	m.add("go_gc_heap_live_bytes", "gauge", "Heap memory occupied by live objects that were marked by the previous GC.", none, float64(rm[0].Value.Uint64()))
	m.add("go_gc_gogc_percent", "gauge", "Heap size target percentage configured by the user, otherwise 100.", none, float64(rm[1].Value.Uint64()))
	m.add("go_gc_gomemlimit_bytes", "gauge", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", none, float64(rm[2].Value.Uint64()))
	inUse, limit := s.b.MemoryBudget()
	l := [][2]string{{"cluster", cluster}}
	m.add("letterbox_frame_buffers_off_heap_bytes", "gauge",
		"Bytes of frame buffers, and so of in-memory data, mapped outside Go's heap and held or idle: not in the go_memstats heap figures.", l, float64(s.b.OffHeapBytes()))
	m.add("letterbox_memory_in_use_bytes", "gauge", "Bytes the in-memory store holds (0 with durable storage).", l, float64(inUse))
	m.add("letterbox_memory_limit_bytes", "gauge", "The in-memory store's budget (--memory-limit; 0: none).", l, float64(limit))
	acked, backlog := s.b.StoredBytes()
	m.add("letterbox_stored_acknowledged_bytes", "gauge",
		"Data bytes stored that no subscription needs (acknowledged by all, or on a topic without subscriptions), kept until their ledger is freed.", l, float64(acked))
	m.add("letterbox_stored_backlog_bytes", "gauge", "Data bytes stored that a subscription has not acknowledged (each topic's estimated backlog size).", l, float64(backlog))
}
