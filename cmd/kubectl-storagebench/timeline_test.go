package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/results"
)

// stepRecord is a step ConfigMap of oltp-ontap-nas whose timeline has 10
// seconds at 500 IOPS with nothing completed in seconds 4 and 5.
func stepRecord(t *testing.T, k int) *corev1.ConfigMap {
	t.Helper()
	tl := results.Timeline{WindowSeconds: 1, Idle: []results.Span{{StartMs: 4000, EndMs: 6000}}}
	for s := range 10 {
		w := results.Window{StartMs: uint64(s) * 1000, IOs: 500, IOPS: 500, Hist: fio.Histogram{Bins: []fio.Bin{{Index: fio.IndexOf(300_000), Count: 500}}}}
		if s == 4 || s == 5 {
			w = results.Window{StartMs: w.StartMs}
		}
		tl.Windows = append(tl.Windows, w)
	}
	data, err := json.Marshal(results.StepAggregate{Step: k, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: exchange.StepName("oltp-ontap-nas", k), Namespace: ns},
		Data:       map[string]string{exchange.KeyAggregate: string(data)},
	}
}

func TestReportTimeline(t *testing.T) {
	ctx := context.Background()
	cm := stepRecord(t, 2)
	if err := k8s.Delete(ctx, cm.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, cm.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	wantSVG := []string{"oltp-ontap-nas · step 3 · every second", "longest stall 2 s, from 4 s"}

	out, errOut, code := plugin(t, "report", "oltp-ontap-nas", "-n", ns, "--timeline", "3", "-o", "svg")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range wantSVG {
		if !strings.Contains(out, w) {
			t.Errorf("svg from the cluster does not say %q", w)
		}
	}

	// Saved objects: the benchmark and its step ConfigMap in one List.
	sb, err := fixture("oltp")
	if err != nil {
		t.Fatal(err)
	}
	sb.Namespace = ns
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{sb, cm}}
	data, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(saved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = plugin(t, "report", "--from-file", saved, "--timeline", "3", "-o", "svg")
	if code != exitOK {
		t.Fatalf("from file: exit %d: %s", code, errOut)
	}
	for _, w := range wantSVG {
		if !strings.Contains(out, w) {
			t.Errorf("svg from the saved objects does not say %q", w)
		}
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--timeline", "5", "-o", "svg"}, "step 5 of oltp-ontap-nas has no record"},
		{[]string{"report", "oltp-ontap-nas", "-n", ns, "--timeline", "3", "-o", "md"}, "--timeline draws a figure"},
		{[]string{"report", "--from-file", saved, "--timeline", "4", "-o", "svg"}, "ConfigMap oltp-ontap-nas-step-003 not found"},
	} {
		_, errOut, code := plugin(t, c.args...)
		if code == exitOK || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want an error saying %q", c.args, code, errOut, c.msg)
		}
	}
}
