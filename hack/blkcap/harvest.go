package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/storagebench/storagebench/internal/backend"
)

// The local test bed's stand-in for NetApp Harvest: the capped volumes are
// real block devices, so their kernel disk statistics (what the block
// layer completed, below the cap) are what the storage served. Every poll,
// the exporter turns each capped PV's counters into the rates Harvest
// exports for an ONTAP volume, under Harvest's names and labels (volume:
// the PV's name; svm; cluster: the node), as Harvest does from ONTAP's
// volume counters:
//
//	volume_read_ops, volume_write_ops     completed I/Os per second
//	volume_read_data, volume_write_data   bytes per second (sectors × 512)
//	volume_read_latency, …_write_latency  µs per I/O: time the kernel spent
//	                                      on them over the interval ÷ their
//	                                      number; left out without I/O
//
// The kernel counts time in milliseconds per device; over one second of a
// few hundred I/Os that is a coarse mean, and a lower bound of the
// clients' (the cap's throttling happens before the device's queue).

// DiskStat is the part of /sys/dev/block/MAJ:MIN/stat the rates come from.
type DiskStat struct {
	ReadIOs, ReadSectors, ReadTicksMs    uint64
	WriteIOs, WriteSectors, WriteTicksMs uint64
}

// ParseDiskStat reads the kernel's block device statistics line
// (Documentation/block/stat.rst): fields 1–8 are reads completed, merged,
// sectors, ms; writes completed, merged, sectors, ms.
func ParseDiskStat(line string) (DiskStat, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return DiskStat{}, fmt.Errorf("%d fields in %q, want at least 8", len(f), line)
	}
	var n [8]uint64
	for i := range n {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return DiskStat{}, fmt.Errorf("field %d of %q: %w", i+1, line, err)
		}
		n[i] = v
	}
	return DiskStat{ReadIOs: n[0], ReadSectors: n[2], ReadTicksMs: n[3], WriteIOs: n[4], WriteSectors: n[6], WriteTicksMs: n[7]}, nil
}

// Rates are one interval's Harvest figures, by metric; a latency is absent
// when no I/O of its direction completed.
func Rates(prev, cur DiskStat, interval time.Duration) map[string]float64 {
	s := interval.Seconds()
	out := map[string]float64{
		backend.ReadOps:   float64(cur.ReadIOs-prev.ReadIOs) / s,
		backend.WriteOps:  float64(cur.WriteIOs-prev.WriteIOs) / s,
		backend.ReadData:  float64(cur.ReadSectors-prev.ReadSectors) * 512 / s,
		backend.WriteData: float64(cur.WriteSectors-prev.WriteSectors) * 512 / s,
	}
	if n := cur.ReadIOs - prev.ReadIOs; n > 0 {
		out[backend.ReadLatency] = float64(cur.ReadTicksMs-prev.ReadTicksMs) * 1000 / float64(n)
	}
	if n := cur.WriteIOs - prev.WriteIOs; n > 0 {
		out[backend.WriteLatency] = float64(cur.WriteTicksMs-prev.WriteTicksMs) * 1000 / float64(n)
	}
	return out
}

// reading is a device's counters when last read.
type reading struct {
	device string
	at     time.Time
	stat   DiskStat
}

// harvest exports the capped PVs' rates.
type harvest struct {
	pvs    listersv1.PersistentVolumeLister
	node   string
	svm    string
	gauges map[string]*prometheus.GaugeVec

	mu   sync.Mutex
	last map[string]reading // by PV
}

func newHarvest(pvs listersv1.PersistentVolumeLister, node, svm string) (*harvest, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	h := &harvest{pvs: pvs, node: node, svm: svm, gauges: map[string]*prometheus.GaugeVec{}, last: map[string]reading{}}
	for _, m := range backend.Metrics {
		h.gauges[m] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m, Help: m + " as NetApp Harvest names it, from the kernel's disk statistics of a capped volume"},
			[]string{"volume", "svm", "cluster"})
		reg.MustRegister(h.gauges[m])
	}
	return h, reg
}

// serveHarvest listens on addr, writes the address it got to addrFile,
// and polls every interval until ctx ends.
func serveHarvest(ctx context.Context, h *harvest, reg *prometheus.Registry, addr, addrFile string, interval time.Duration) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
			_ = l.Close()
			return err
		}
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	log.Printf("blkcap: Harvest's volume series of capped volumes on http://%s/metrics, every %v", l.Addr(), interval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return srv.Close()
		case now := <-t.C:
			h.poll(now)
		}
	}
}

// poll reads every capped PV's counters and sets its rates since the
// last poll; a PV that is gone, or whose device changed, loses its series.
func (h *harvest) poll(now time.Time) {
	pvs, err := h.pvs.List(labels.Everything())
	if err != nil {
		log.Printf("blkcap: listing PVs: %v", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	for _, pv := range pvs {
		dev, ok := h.device(pv)
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/sys/dev/block", dev, "stat"))
		if err != nil {
			continue
		}
		st, err := ParseDiskStat(string(b))
		if err != nil {
			log.Printf("blkcap: %s: %v", dev, err)
			continue
		}
		seen[pv.Name] = true
		prev, had := h.last[pv.Name]
		h.last[pv.Name] = reading{device: dev, at: now, stat: st}
		if !had || prev.device != dev {
			continue // rates need two readings of the same device
		}
		rates := Rates(prev.stat, st, now.Sub(prev.at))
		for _, m := range backend.Metrics {
			g := h.gauges[m]
			if v, ok := rates[m]; ok {
				g.WithLabelValues(pv.Name, h.svm, h.node).Set(v)
			} else {
				g.DeleteLabelValues(pv.Name, h.svm, h.node)
			}
		}
	}
	for name := range h.last {
		if !seen[name] {
			delete(h.last, name)
			for _, g := range h.gauges {
				g.DeleteLabelValues(name, h.svm, h.node)
			}
		}
	}
}

// device is a capped PV's major:minor on this node.
func (h *harvest) device(pv *corev1.PersistentVolume) (string, bool) {
	cp, err := CapOf(pv, deviceOf)
	if err != nil || cp == nil || !onNode(pv, h.node) {
		return "", false
	}
	return cp.Device, true
}

// onNode: the local PV's node affinity names this node.
func onNode(pv *corev1.PersistentVolume, node string) bool {
	a := pv.Spec.NodeAffinity
	if a == nil || a.Required == nil {
		return false
	}
	for _, t := range a.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn && slices.Contains(e.Values, node) {
				return true
			}
		}
	}
	return false
}
