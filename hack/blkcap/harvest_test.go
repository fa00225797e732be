package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/internal/backend"
)

func TestRatesFromDiskStats(t *testing.T) {
	// Two readings of a device a second and a half apart: 1,500 reads of
	// 4 KiB taking 300 ms in all, 30 writes of 8 KiB taking 45 ms.
	prev, err := ParseDiskStat("  100 0 800 40 10 0 160 5 0 60 50 0 0 0 0 0 0")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ParseDiskStat("1600 7 12800 340 40 0 640 50 0 900 400 0 0 0 0 0 0\n")
	if err != nil {
		t.Fatal(err)
	}
	got := Rates(prev, cur, 1500*time.Millisecond)
	want := map[string]float64{
		backend.ReadOps: 1000, backend.ReadData: 1000 * 4096, backend.ReadLatency: 200,
		backend.WriteOps: 20, backend.WriteData: 20 * 8192, backend.WriteLatency: 1500,
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%s = %v, want %v", m, got[m], w)
		}
	}
	idle := Rates(cur, cur, time.Second)
	if _, ok := idle[backend.ReadLatency]; ok || idle[backend.ReadOps] != 0 {
		t.Errorf("an idle interval: %v; want zero rates and no latency", idle)
	}
	if _, err := ParseDiskStat("1 2 3"); err == nil {
		t.Error("a short line parsed")
	}
}

// The parser reads this machine's own block devices' statistics.
func TestParseDiskStatOfThisMachine(t *testing.T) {
	stats, _ := filepath.Glob("/sys/block/*/stat")
	if len(stats) == 0 {
		t.Fatal("no block device statistics under /sys/block")
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDiskStat(string(b)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestOnNode(t *testing.T) {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PersistentVolumeSpec{
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"vm"}}},
		}}}}}}
	if !onNode(pv, "vm") || onNode(pv, "vm-n1") || onNode(&corev1.PersistentVolume{}, "vm") {
		t.Error("onNode does not follow the PV's hostname affinity")
	}
}
