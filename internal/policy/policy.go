// Package policy holds what a cluster admin allows tenants' benchmarks to
// ask for (the runner image, scheduling keys) and the defaults derived from
// a benchmark for its client pods (memory limit, image pull policy). It is
// pure: no Kubernetes client. The manager checks every benchmark against
// the Policy of its flags; the Helm chart's ValidatingAdmissionPolicy
// enforces the same rules, with the same messages, at admission.
package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/workload"
)

// Any, in AllowedTolerationKeys or AllowedNodeSelectorKeys, allows every
// key, the empty one included.
const Any = "*"

// The manager flags that set each list of a Policy; messages name them.
const (
	FlagImages           = "--allowed-runner-images"
	FlagTolerationKeys   = "--allowed-toleration-keys"
	FlagNodeSelectorKeys = "--allowed-node-selector-keys"
	FlagMaxClientMemory  = "--max-client-memory"
)

// DefaultMaxClientMemory is the most memory a client pod may ask for
// unless the admin sets MaxClientMemory: far above what the profiles need
// (a few hundred MiB), below what a tenant should take from a node
// without asking.
var DefaultMaxClientMemory = resource.MustParse("8Gi")

// Policy is what benchmarks may ask for. The zero value is the safe
// default: only the configured runner image, no tolerations, no node
// selector.
type Policy struct {
	// AllowedImages are the exact image references a benchmark's
	// spec.clients.image may name, besides the configured runner image,
	// which is always allowed. Empty: only the configured runner image.
	AllowedImages []string
	// AllowedTolerationKeys are the taint keys a benchmark's
	// spec.clients.tolerations may tolerate. Empty: no toleration at all.
	// Any ("*") allows every key, including a toleration without a key,
	// which tolerates every taint and is allowed only by Any.
	AllowedTolerationKeys []string
	// AllowedNodeSelectorKeys are the label keys a benchmark's
	// spec.clients.nodeSelector may use. Empty: no node selector. Any ("*")
	// allows every key.
	AllowedNodeSelectorKeys []string
	// MaxClientMemory bounds a client pod's memory: the limit and request
	// a benchmark's spec.clients.resources sets, and the limit the
	// operator derives from its workload. Nil: DefaultMaxClientMemory.
	MaxClientMemory *resource.Quantity
}

// MaxMemory is the bound on a client pod's memory.
func (p Policy) MaxMemory() resource.Quantity {
	if p.MaxClientMemory != nil {
		return *p.MaxClientMemory
	}
	return DefaultMaxClientMemory
}

// CheckMemory returns a *Violation when q, the memory of field, is above
// MaxMemory.
func (p Policy) CheckMemory(field string, q resource.Quantity) error {
	if limit := p.MaxMemory(); q.Cmp(limit) > 0 {
		return &Violation{Field: field, Value: q.String(), Allowed: []string{"at most " + limit.String()}, Flag: FlagMaxClientMemory}
	}
	return nil
}

// Violation is one benchmark field the policy does not allow.
type Violation struct {
	// Field names the field as the message does:
	// spec.clients.image, spec.clients.tolerations[2].key or
	// spec.clients.nodeSelector key.
	Field string
	// Value is the value the benchmark gave it (Error truncates it).
	Value string
	// Allowed is what the policy allows in the field.
	Allowed []string
	// Flag is the manager flag that lists what is allowed.
	Flag string
}

// maxValue bounds how much of a user's string a message repeats.
const maxValue = 100

// Error says what is refused, what is allowed and who can change it.
func (v *Violation) Error() string {
	allowed := "none"
	if len(v.Allowed) > 0 {
		allowed = strings.Join(v.Allowed, ", ")
	}
	if v.Flag == FlagMaxClientMemory {
		return fmt.Sprintf("%s %s is above the operator's policy (%s); ask the cluster admin to raise %s", v.Field, v.Value, allowed, v.Flag)
	}
	if v.Value == "" && v.Flag == FlagTolerationKeys {
		return fmt.Sprintf("%s is empty, which tolerates every taint: the operator's policy allows that only with %q in %s (allowed: %s)",
			v.Field, Any, v.Flag, allowed)
	}
	return fmt.Sprintf("%s %s is not allowed by the operator's policy (allowed: %s); ask the cluster admin to add it to %s",
		v.Field, quote(v.Value), allowed, v.Flag)
}

// quote quotes s, cut to maxValue characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxValue {
		s = string([]rune(s)[:maxValue]) + "…"
	}
	return strconv.Quote(s)
}

// Check returns a *Violation for the first field of spec the policy does
// not allow (the image, then tolerations in order, then node selector keys
// in sorted order, then the memory limit and request), or nil. runnerImage is the manager's configured runner
// image.
func (p Policy) Check(spec *v1alpha1.StorageBenchmarkSpec, runnerImage string) error {
	if spec == nil {
		return nil
	}
	c := &spec.Clients
	if c.Image != "" && c.Image != runnerImage && !slices.Contains(p.AllowedImages, c.Image) {
		return &Violation{Field: "spec.clients.image", Value: c.Image, Allowed: p.Images(runnerImage), Flag: FlagImages}
	}
	for i, t := range c.Tolerations {
		if !allowsKey(p.AllowedTolerationKeys, t.Key) {
			return &Violation{Field: fmt.Sprintf("spec.clients.tolerations[%d].key", i), Value: t.Key,
				Allowed: p.AllowedTolerationKeys, Flag: FlagTolerationKeys}
		}
	}
	keys := make([]string, 0, len(c.NodeSelector))
	for k := range c.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !allowsKey(p.AllowedNodeSelectorKeys, k) {
			return &Violation{Field: "spec.clients.nodeSelector key", Value: k, Allowed: p.AllowedNodeSelectorKeys, Flag: FlagNodeSelectorKeys}
		}
	}
	if r := c.Resources; r != nil {
		if q, ok := r.Limits[corev1.ResourceMemory]; ok {
			if err := p.CheckMemory("spec.clients.resources.limits.memory", q); err != nil {
				return err
			}
		}
		if q, ok := r.Requests[corev1.ResourceMemory]; ok {
			if err := p.CheckMemory("spec.clients.resources.requests.memory", q); err != nil {
				return err
			}
		}
	}
	return nil
}

// Images lists the images a benchmark may name: runnerImage first, then
// AllowedImages without repeats.
func (p Policy) Images(runnerImage string) []string {
	out := []string{runnerImage}
	for _, img := range p.AllowedImages {
		if !slices.Contains(out, img) {
			out = append(out, img)
		}
	}
	return out
}

// allowsKey: key is listed, or the list holds Any. An empty key (which
// matches everything) is allowed only by Any.
func allowsKey(allowed []string, key string) bool {
	return slices.Contains(allowed, Any) || (key != "" && slices.Contains(allowed, key))
}

// ImagePullPolicy is the pull policy of a client container running image.
// An image the benchmark chose (not the configured runnerImage) is always
// pulled (PullAlways), so the kubelet checks the benchmark's own pull
// credentials instead of starting another tenant's cached private image;
// the configured image keeps the configured policy.
func ImagePullPolicy(image, runnerImage string, configured corev1.PullPolicy) corev1.PullPolicy {
	if image != "" && image != runnerImage {
		return corev1.PullAlways
	}
	return configured
}

// The parts of RunnerMemoryLimit, measured with fio 3.33 and the runner
// (the sum of the processes' proportional set sizes): fio's main process
// ~27 MiB, each further job process 0.5 to 6 MiB (its share of fio's
// shared pages and its own stack, tables and latency bins), the runner
// ~36 MiB, and each job's I/O buffers, iodepth × block size, touched in
// full. The base and per-job figures carry a margin of about 2, the
// buffers one of 2 (fio may hold a second buffer per I/O unit with some
// engines and options).
const (
	memoryBase         = 128 << 20
	memoryPerJob       = 16 << 20
	memoryBufferFactor = 2
	mib                = 1 << 20
)

// RunnerMemoryLimit is a memory limit for a client's runner container that
// fits the workload w with jobsPerClient fio jobs under the load l, and
// the preconditioning run when precondition is set: a fixed base for the
// runner and fio, a share per job, and twice the largest I/O buffers its
// fio runs hold at once (outstanding I/Os × block size: the most any step
// gives one client, plan.Outstanding: jobs × w.IODepth, twice that for a
// curve's client-bound check, or the deepest step's depth per client of a
// queue-depth load, which ignores w.IODepth).
// When steps are ordered ahead (plan.Load.Fixed, two or more) the next step's fio
// starts while the last one ends: two consecutive steps' buffers, and a
// second share per job (that fio's, and the process waiting per job to
// release its I/O), are held at once.
// Rounded up to a MiB. Buffered I/O (w.Direct false) also charges the page
// cache to the container, which the kernel reclaims at the limit.
func RunnerMemoryLimit(w workload.Spec, jobsPerClient int32, l plan.Load, precondition bool) resource.Quantity {
	jobs := max(int64(jobsPerClient), 1)
	perJob := int64(memoryPerJob)
	var buffers, last int64
	one := plan.Topology{Clients: 1, JobsPerClient: int32(jobs)}
	steps := plan.Steps(l)
	overlap := l.Fixed() && len(steps) > 1
	for _, s := range steps {
		b := plan.Outstanding(s, one, w) * w.BlockSizeBytes
		buffers = max(buffers, b)
		if overlap {
			buffers = max(buffers, last+b)
		}
		last = b
	}
	if overlap {
		perJob *= 2
	}
	if precondition {
		pre := fio.Precondition("precondition", string(w.IOEngine), w.Direct, int(jobs), 0, w.WorkingSetBytesPerClient/jobs)
		var b int64
		for _, j := range pre.Jobs {
			b += int64(j.IODepth) * pre.BlockSizeBytes
		}
		buffers = max(buffers, b)
	}
	total := memoryBase + jobs*perJob + memoryBufferFactor*buffers
	total = (total + mib - 1) / mib * mib
	return *resource.NewQuantity(total, resource.BinarySI)
}
