package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/results"
)

// realResult is a client's step result from a real fio json+ report.
func realResult(t *testing.T) results.ClientStep {
	t.Helper()
	data, err := os.ReadFile("../results/testdata/fio-oltp-2jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := fio.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r, w, _ := results.FromFio(out)
	return results.ClientStep{Client: 2, Step: 1, Jobs: 2, Read: r, Write: w}
}

func clientCM(key, value string, client, step string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b-client-002", Labels: map[string]string{}, Annotations: map[string]string{}},
		Data: map[string]string{key: value}}
	if client != "" {
		cm.Labels[LabelClient] = client
	}
	if step != "" {
		cm.Annotations[AnnotationResultStep] = step
	}
	return cm
}

func encode(t *testing.T, v any) string {
	t.Helper()
	s, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResultIsBoundedAndValidated(t *testing.T) {
	good := realResult(t)
	long := good
	long.Error = strings.Repeat("é", 3*protocol.MaxErrorBytes)
	negative := encode(t, good)
	negative = strings.Replace(negative, `"iops":`, `"iops":-`, 1)
	cases := []struct {
		name          string
		value         string
		client, step  string
		wantErr       string // "" when accepted
		wantErrorText int    // length of the accepted result's Error
	}{
		{"real result", encode(t, good), "2", "1", "", 0},
		{"without label and annotation", encode(t, good), "", "", "", 0},
		{"error text cut", encode(t, long), "2", "1", "", protocol.MaxErrorBytes},
		{"over the cap", `{"error":"` + strings.Repeat("x", MaxClientValueBytes) + `"}`, "2", "1",
			fmt.Sprintf("ConfigMap b-client-002 key result.json: %d bytes exceed the %d-byte cap", MaxClientValueBytes+12, MaxClientValueBytes), 0},
		{"not JSON", `{"client":`, "2", "1", "ConfigMap b-client-002 key result.json", 0},
		{"number beyond float64", `{"read":{"iops":1e400}}`, "", "", "result.json", 0},
		{"negative rate", negative, "2", "1", "iops -", 0},
		{"another client's result", encode(t, good), "3", "1", "reports client 2 but storagebench.io/client says 3", 0},
		{"another step's result", encode(t, good), "2", "0", "reports step 1 but storagebench.io/result-step says 0", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, found, err := Result(clientCM(KeyResult, c.value, c.client, c.step))
			if refused(t, found, err, c.wantErr) {
				if r.Client != 0 || r.Read.IOs != 0 {
					t.Fatalf("a refused result was returned: %+v", r)
				}
				return
			}
			if len(r.Error) != c.wantErrorText || r.Read.IOs != good.Read.IOs {
				t.Fatalf("error text of %d bytes, want %d; %d read I/Os", len(r.Error), c.wantErrorText, r.Read.IOs)
			}
		})
	}
	if _, found, err := Result(clientCM(KeyReady, "{}", "", "")); found || err != nil {
		t.Fatalf("absent result: found %v, %v", found, err)
	}
}

// wireCM is a client ConfigMap holding an encoded result in binaryData.
func wireCM(value []byte, client, step string) *corev1.ConfigMap {
	cm := clientCM(KeyReady, "{}", client, step)
	cm.BinaryData = map[string][]byte{KeyResultWire: value}
	return cm
}

func TestWireResultIsBoundedAndValidated(t *testing.T) {
	good := realResult(t)
	wire := results.AppendWire(nil, &good)
	long := good
	long.Error = strings.Repeat("é", 3*protocol.MaxErrorBytes)
	negative := good
	negative.Read.IOPS = -1
	newer := append([]byte("SBR\x04"), wire[4:]...)
	cases := []struct {
		name          string
		cm            *corev1.ConfigMap
		wantErr       string // "" when accepted
		wantErrorText int    // length of the accepted result's Error
	}{
		{"real result", wireCM(wire, "2", "1"), "", 0},
		{"error text cut", wireCM(results.AppendWire(nil, &long), "2", "1"), "", protocol.MaxErrorBytes},
		{"over the cap", wireCM(make([]byte, MaxClientValueBytes+1), "2", "1"),
			fmt.Sprintf("ConfigMap b-client-002 key result.bin: %d bytes exceed the %d-byte cap", MaxClientValueBytes+1, MaxClientValueBytes), 0},
		{"not the wire encoding", wireCM([]byte(encode(t, good)), "2", "1"), "key result.bin: not an encoded result (no SBR header)", 0},
		{"a newer version", wireCM(newer, "2", "1"), "unknown result encoding version 4 (this build reads [3 2 1])", 0},
		{"truncated", wireCM(wire[:len(wire)-1], "2", "1"), "key result.bin: encoded result", 0},
		{"negative rate", wireCM(results.AppendWire(nil, &negative), "2", "1"), "iops -1", 0},
		{"another client's result", wireCM(wire, "3", "1"), "reports client 2 but storagebench.io/client says 3", 0},
		{"both encodings", func() *corev1.ConfigMap {
			cm := wireCM(wire, "2", "1")
			cm.Data[KeyResult] = encode(t, good)
			return cm
		}(), "key result.bin: the ConfigMap also holds result.json: a runner writes one encoding", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, found, err := Result(c.cm)
			if refused(t, found, err, c.wantErr) {
				return
			}
			if len(r.Error) != c.wantErrorText || r.Read.IOs != good.Read.IOs || !reflect.DeepEqual(r.Read.Latency.Hist, good.Read.Latency.Hist) {
				t.Fatalf("error text of %d bytes, want %d; %d read I/Os", len(r.Error), c.wantErrorText, r.Read.IOs)
			}
		})
	}
}

func TestReadyReportIsBoundedAndValidated(t *testing.T) {
	long := strings.Repeat("x", 10*protocol.MaxErrorBytes)
	cases := []struct {
		name    string
		value   string
		client  string
		wantErr string
	}{
		{"ready", encode(t, protocol.Ready{Client: 2, FioVersion: "fio-3.33", ClockOffset: 1500}), "2", ""},
		{"long texts cut", encode(t, protocol.Ready{Client: 2, Error: long, FioVersion: long, ClockOffsetError: long,
			Mount: &protocol.Mount{Source: long, FSType: long, Options: long}}), "2", ""},
		{"over the cap", encode(t, protocol.Ready{Error: strings.Repeat("x", MaxClientValueBytes)}), "2", "exceed the 262144-byte cap"},
		{"not JSON", "[", "2", "ready.json"},
		{"absurd clock offset", encode(t, protocol.Ready{Client: 2, ClockOffset: 48 * 3600e9}), "2", "clock offset"},
		{"another client's report", encode(t, protocol.Ready{Client: 5}), "2", "reports client 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, found, err := ReadyReport(clientCM(KeyReady, c.value, c.client, ""))
			if refused(t, found, err, c.wantErr) {
				return
			}
			for _, s := range []string{r.Error, r.FioVersion, r.ClockOffsetError} {
				if len(s) > protocol.MaxErrorBytes {
					t.Fatalf("text of %d bytes kept", len(s))
				}
			}
			if m := r.Mount; m != nil && (len(m.Source) > protocol.MaxErrorBytes || len(m.Options) > protocol.MaxErrorBytes || len(m.FSType) > protocol.MaxErrorBytes) {
				t.Fatal("mount text not cut")
			}
		})
	}
}

// TestLargestValidResultFitsTheCap encodes the largest result that passes
// validation: every histogram bin filled in both directions with the largest
// count, and the longest error text, made of characters JSON escapes.
func TestLargestValidResultFitsTheCap(t *testing.T) {
	d := results.Operation{IOs: results.MaxCount, Bytes: results.MaxCount, IOPS: results.MaxFloat, BytesPerSec: results.MaxFloat}
	var total uint64
	for i := range fio.PlatNR {
		d.Latency.Hist.Bins = append(d.Latency.Hist.Bins, fio.Bin{Index: i, Count: results.MaxCount / fio.PlatNR})
		total += results.MaxCount / fio.PlatNR
	}
	d.Latency.Count, d.Latency.MinNs, d.Latency.MaxNs = total, 0, results.MaxCount
	d.Latency.MeanNs, d.Latency.StdNs = 123456789.123456789, 98765432.1987654321
	c := results.ClientStep{Client: results.MaxClients - 1, Step: results.MaxSteps - 1, Jobs: results.MaxJobsPerClient,
		Read: d, Write: d, Error: protocol.Truncate(strings.Repeat("<", 2*protocol.MaxErrorBytes), protocol.MaxErrorBytes)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("largest valid result: %d bytes; real two-job result: %d bytes; cap %d", len(b), len(encode(t, realResult(t))), MaxClientValueBytes)
	if len(b) > MaxClientValueBytes*3/4 {
		t.Fatalf("the largest valid result is %d bytes, too close to the %d-byte cap", len(b), MaxClientValueBytes)
	}
	if _, _, err := Result(clientCM(KeyResult, string(b), "", "")); err != nil {
		t.Fatal(err)
	}
	// The wire encoding of the same result is smaller still.
	w := results.AppendWire(nil, &c)
	t.Logf("largest valid result in the wire encoding: %d bytes", len(w))
	if len(w) > len(b) {
		t.Fatalf("the wire encoding (%d bytes) is larger than the JSON (%d)", len(w), len(b))
	}
	if _, _, err := Result(wireCM(w, "", "")); err != nil {
		t.Fatal(err)
	}
}

// refused checks a present client value's read against a table case's
// expected error, as wantErr does; a refusal must be ErrInvalidClientData.
func refused(t *testing.T, found bool, err error, want string) bool {
	t.Helper()
	if !found {
		t.Fatal("not found")
	}
	if !wantErr(t, err, want) {
		return false
	}
	if !errors.Is(err, ErrInvalidClientData) {
		t.Fatalf("got %v, want ErrInvalidClientData", err)
	}
	return true
}

// wantErr checks err against a table case's expected error: with want set,
// an error containing it (and wantErr reports true, the case is done);
// without, no error at all.
func wantErr(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	return true
}
