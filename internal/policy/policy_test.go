package policy

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/workload"
)

const runner = "localhost/storagebench-runner:0.1.0"

func TestCheck(t *testing.T) {
	clients := func(c v1alpha1.ClientsSpec) *v1alpha1.StorageBenchmarkSpec {
		return &v1alpha1.StorageBenchmarkSpec{Clients: c}
	}
	tol := func(keys ...string) []corev1.Toleration {
		var out []corev1.Toleration
		for _, k := range keys {
			op := corev1.TolerationOpEqual
			if k == "" {
				op = corev1.TolerationOpExists
			}
			out = append(out, corev1.Toleration{Key: k, Operator: op, Effect: corev1.TaintEffectNoSchedule})
		}
		return out
	}
	open := Policy{
		AllowedImages:           []string{"registry.example/runner:2", runner},
		AllowedTolerationKeys:   []string{"dedicated", "gpu"},
		AllowedNodeSelectorKeys: []string{"pool"},
	}
	star := Policy{AllowedTolerationKeys: []string{Any}, AllowedNodeSelectorKeys: []string{Any}}
	mem := func(limit, request string) *corev1.ResourceRequirements {
		r := &corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}
		if limit != "" {
			r.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
		}
		if request != "" {
			r.Requests[corev1.ResourceMemory] = resource.MustParse(request)
		}
		return r
	}
	long := strings.Repeat("x", 300)

	for _, tc := range []struct {
		name   string
		policy Policy
		spec   *v1alpha1.StorageBenchmarkSpec
		want   string // the whole message; "" = allowed
	}{
		{"nil spec", Policy{}, nil, ""},
		{"nothing asked", Policy{}, clients(v1alpha1.ClientsSpec{Count: 3}), ""},
		{"the runner image named", Policy{}, clients(v1alpha1.ClientsSpec{Image: runner}), ""},
		{"another image, empty list", Policy{}, clients(v1alpha1.ClientsSpec{Image: "evil:latest"}),
			`spec.clients.image "evil:latest" is not allowed by the operator's policy (allowed: ` + runner +
				`); ask the cluster admin to add it to --allowed-runner-images`},
		{"a listed image", open, clients(v1alpha1.ClientsSpec{Image: "registry.example/runner:2"}), ""},
		{"an unlisted image: the runner image listed once", open, clients(v1alpha1.ClientsSpec{Image: "registry.example/runner:3"}),
			`spec.clients.image "registry.example/runner:3" is not allowed by the operator's policy (allowed: ` + runner +
				`, registry.example/runner:2); ask the cluster admin to add it to --allowed-runner-images`},
		{"a prefix of a listed image", open, clients(v1alpha1.ClientsSpec{Image: "registry.example/runner"}), "spec.clients.image"},
		{"a long image is cut", Policy{}, clients(v1alpha1.ClientsSpec{Image: long}),
			`spec.clients.image "` + strings.Repeat("x", 100) + `…" is not allowed`},
		{"a toleration, empty list", Policy{}, clients(v1alpha1.ClientsSpec{Tolerations: tol("dedicated")}),
			`spec.clients.tolerations[0].key "dedicated" is not allowed by the operator's policy (allowed: none); ask the cluster admin to add it to --allowed-toleration-keys`},
		{"listed tolerations", open, clients(v1alpha1.ClientsSpec{Tolerations: tol("gpu", "dedicated")}), ""},
		{"the first unlisted toleration", open, clients(v1alpha1.ClientsSpec{Tolerations: tol("gpu", "control-plane", "other")}),
			`spec.clients.tolerations[1].key "control-plane" is not allowed by the operator's policy (allowed: dedicated, gpu); ask the cluster admin to add it to --allowed-toleration-keys`},
		{"a toleration without a key", open, clients(v1alpha1.ClientsSpec{Tolerations: tol("gpu", "")}),
			`spec.clients.tolerations[1].key is empty, which tolerates every taint: the operator's policy allows that only with "*" in --allowed-toleration-keys (allowed: dedicated, gpu)`},
		{"* allows any toleration", star, clients(v1alpha1.ClientsSpec{Tolerations: tol("x", "")}), ""},
		{"a node selector, empty list", Policy{}, clients(v1alpha1.ClientsSpec{NodeSelector: map[string]string{"pool": "a"}}),
			`spec.clients.nodeSelector key "pool" is not allowed by the operator's policy (allowed: none); ask the cluster admin to add it to --allowed-node-selector-keys`},
		{"a listed node selector key", open, clients(v1alpha1.ClientsSpec{NodeSelector: map[string]string{"pool": "a"}}), ""},
		{"the first unlisted key in sorted order", open, clients(v1alpha1.ClientsSpec{NodeSelector: map[string]string{"pool": "a", "zz": "1", "kubernetes.io/hostname": "n1"}}),
			`spec.clients.nodeSelector key "kubernetes.io/hostname" is not allowed`},
		{"* allows any node selector", star, clients(v1alpha1.ClientsSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": "n1"}}), ""},
		{"* does not allow images", star, clients(v1alpha1.ClientsSpec{Image: "*"}), `spec.clients.image "*" is not allowed`},
		{"the image is reported first", Policy{}, clients(v1alpha1.ClientsSpec{Image: "x:1", Tolerations: tol("a"), NodeSelector: map[string]string{"b": ""}}),
			`spec.clients.image "x:1"`},
		{"a memory limit within the default bound", Policy{}, clients(v1alpha1.ClientsSpec{Resources: mem("8Gi", "")}), ""},
		{"a memory limit above the default bound", Policy{}, clients(v1alpha1.ClientsSpec{Resources: mem("1Ti", "")}),
			`spec.clients.resources.limits.memory 1Ti is above the operator's policy (at most 8Gi); ask the cluster admin to raise --max-client-memory`},
		{"a memory request above the bound", Policy{}, clients(v1alpha1.ClientsSpec{Resources: mem("", "9Gi")}),
			`spec.clients.resources.requests.memory 9Gi is above the operator's policy (at most 8Gi)`},
		{"a memory limit in bytes, above the bound", Policy{}, clients(v1alpha1.ClientsSpec{Resources: mem("8589934593", "")}),
			`spec.clients.resources.limits.memory 8589934593 is above the operator's policy (at most 8Gi)`},
		{"an admin's higher bound", Policy{MaxClientMemory: ptr.To(resource.MustParse("64Gi"))}, clients(v1alpha1.ClientsSpec{Resources: mem("32Gi", "32Gi")}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Check(tc.spec, runner)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("got %v, want a *Violation", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("message\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestImagePullPolicy(t *testing.T) {
	for _, tc := range []struct {
		image      string
		configured corev1.PullPolicy
		want       corev1.PullPolicy
	}{
		{"", corev1.PullIfNotPresent, corev1.PullIfNotPresent},
		{runner, corev1.PullIfNotPresent, corev1.PullIfNotPresent},
		{runner, corev1.PullNever, corev1.PullNever},
		{"registry.example/tenant/runner:1", corev1.PullIfNotPresent, corev1.PullAlways},
		{"registry.example/tenant/runner:1", corev1.PullNever, corev1.PullAlways},
	} {
		if got := ImagePullPolicy(tc.image, runner, tc.configured); got != tc.want {
			t.Errorf("ImagePullPolicy(%q, configured %s) = %s, want %s", tc.image, tc.configured, got, tc.want)
		}
	}
}

func TestRunnerMemoryLimit(t *testing.T) {
	ws := func(s workload.Spec, bs int64, depth int32) workload.Spec {
		s.BlockSizeBytes, s.IODepth = bs, depth
		return s
	}
	base := workload.BaseSpec() // 4 KiB, iodepth 16, libaio, 1 GiB per client
	rates := plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200}}}
	depths := func(d ...int32) plan.Load { return plan.Load{QueueDepth: &plan.QueueDepthSteps{Steps: d}} }
	curve := func(check bool) plan.Load {
		return plan.Load{Curve: &plan.CurveSpec{Percents: []int32{50}, ClientBoundCheck: check}}
	}
	const mi = 1 << 20
	for _, tc := range []struct {
		name    string
		w       workload.Spec
		jobs    int32
		load    plan.Load
		precond bool
		want    int64 // MiB
	}{
		// Rate and queue-depth lists are ordered ahead: two steps' fio
		// coexist, so two shares per job and two steps' buffers.
		// 128 + 2 × 16 + 2 × (2 steps × 16 × 4 KiB = 128 KiB), rounded up.
		{"defaults, no preconditioning", base, 1, rates, false, 128 + 2*16 + 1},
		// Preconditioning writes 1 MiB blocks at iodepth 16: 16 MiB per job.
		{"defaults, preconditioned", base, 1, rates, true, 128 + 2*16 + 2*16},
		{"4 jobs, 1 MiB × 64", ws(base, mi, 64), 4, rates, false, 128 + 2*4*16 + 2*2*4*64},
		// The deepest consecutive pair: 64 + 256 outstanding 64 KiB I/Os.
		{"queue-depth steps: the deepest pair", ws(base, 64<<10, 1), 2, depths(2, 64, 256), false, 128 + 2*2*16 + 2*(64+256)/16},
		{"queue-depth steps: a deep step between shallow ones", ws(base, 64<<10, 1), 2, depths(16, 256, 16, 16), false, 128 + 2*2*16 + 2*(256+16)/16},
		// A single step has no next one to overlap.
		{"one queue-depth step", ws(base, mi, 8), 4, depths(4), false, 128 + 4*16 + 2*4},
		// A 96 KiB working set per job: preconditioning writes 32 KiB blocks.
		{"preconditioning a small working set", func() workload.Spec {
			s := ws(base, 4096, 1)
			s.WorkingSetBytesPerClient = 3 * 96 << 10
			return s
		}(), 3, rates, true, 128 + 2*3*16 + 3}, // 2 × 3 jobs × 16 × 32 KiB = 3 MiB
		{"synchronous engine: preconditioning at depth 1", func() workload.Spec {
			s := ws(base, 4096, 1)
			s.IOEngine = workload.PSync
			return s
		}(), 2, rates, true, 128 + 2*2*16 + 4}, // 2 × 2 jobs × 1 × 1 MiB
		{"largest spec", ws(base, 16*mi, 1024), 64, depths(4096), true, 128 + 64*16 + 2*4096*16},
		{"largest rate spec", ws(base, 16*mi, 1024), 64, rates, true, 128 + 2*64*16 + 2*2*64*1024*16},
		// Curves are decided from results, never ordered ahead: one fio at
		// a time. A curve's client-bound check doubles every job's depth.
		{"curve with its client-bound check", ws(base, mi, 64), 4, curve(true), false, 128 + 4*16 + 2*4*2*64},
		{"curve without it", ws(base, mi, 64), 4, curve(false), false, 128 + 4*16 + 2*4*64},
		{"rate steps with a stop rule", ws(base, mi, 64), 4, func() plan.Load {
			l := plan.Load{Rate: &plan.RateSteps{Steps: []int64{100, 200}}}
			l.Stop = plan.StopRules{SaturationPercent: 90}
			return l
		}(), false, 128 + 4*16 + 2*4*64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RunnerMemoryLimit(tc.w, tc.jobs, tc.load, tc.precond)
			want := resource.NewQuantity(tc.want*mi, resource.BinarySI)
			if got.Cmp(*want) != 0 {
				t.Errorf("got %s, want %s", got.String(), want.String())
			}
			if got.Value()%mi != 0 {
				t.Errorf("%s is not a whole number of MiB", got.String())
			}
		})
	}
}

// TestRunnerMemoryLimitRoundsUp: a fraction of a MiB costs a whole one.
func TestRunnerMemoryLimitRoundsUp(t *testing.T) {
	w := workload.BaseSpec()
	w.BlockSizeBytes, w.IODepth = 512, 1 // 2 × 512 B of buffers
	got := RunnerMemoryLimit(w, 1, plan.Load{Rate: &plan.RateSteps{Steps: []int64{1}}}, false)
	if want := int64(128+16+1) << 20; got.Value() != want {
		t.Errorf("got %d bytes, want %d", got.Value(), want)
	}
	if s := got.String(); s != "145Mi" {
		t.Errorf("printed %s, want 145Mi", s)
	}
}
