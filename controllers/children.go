package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/run"
	"github.com/storagebench/storagebench/internal/spec"
)

// annotationBegan on the plan ConfigMap is when the run began (the claims
// and the plan were created), on the manager's clock.
const annotationBegan = "storagebench.io/began"

// began is when b's run began on the manager's clock: the plan's record,
// else (a plan of an older manager, or none yet) the benchmark's creation.
func began(b *v1alpha1.StorageBenchmark, plan *metav1.PartialObjectMetadata) time.Time {
	if plan != nil {
		if t, err := time.Parse(time.RFC3339Nano, plan.Annotations[annotationBegan]); err == nil {
			return t
		}
	}
	return b.CreationTimestamp.Time
}

// observed is everything a reconcile looks at, read fresh every time. Its
// claims, ConfigMaps, Jobs and pods come from the pass's lists, made from
// the cache without copying (readChildren): their maps and slices are the
// cache's, so they are only read.
type observed struct {
	claims map[string]*corev1.PersistentVolumeClaim
	// capacity is the smallest bound volume's real capacity.
	capacity *resource.Quantity
	bound    int
	// clients, jobs: index → object (nil when missing).
	// clients and plan are ConfigMaps' metadata: readiness, result step
	// and the current order travel in annotations.
	clients []*metav1.PartialObjectMetadata
	jobs    []*batchv1.Job
	pods    map[int][]corev1.Pod
	plan    *metav1.PartialObjectMetadata
	// order is the plan's current order (when ordered).
	order   protocol.StepOrder
	ordered bool
	// steps are the finished steps, from their ConfigMaps.
	steps []run.Step
	// firstLead is the first step's lead derived from the clients' ready
	// reports (protocol.FirstStepLead), when this pass read them before the
	// first step was ordered; zero otherwise.
	firstLead time.Duration
	// nodes are the Nodes the running client pods are on, by name; nil
	// when the Node is gone (the API server confirmed it).
	nodes map[string]*corev1.Node
}

// unusable says why the run cannot start on the storage asked for.
type unusable struct{ reason, message string }

// storageClass finds the class the claims use: the named one, the cluster
// default when none is named, or the existing claim's — once the claim's
// owner consented and it can hold perClient bytes for each client (0: not
// checked) (consent.go). What rules the run out is an *unusable.
func (r *Reconciler) storageClass(ctx context.Context, b *v1alpha1.StorageBenchmark, perClient int64) (*storagev1.StorageClass, *unusable, error) {
	name := b.Spec.Storage.StorageClassName
	if claim := b.Spec.Storage.ExistingClaim; claim != nil {
		var pvc corev1.PersistentVolumeClaim
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: *claim}, &pvc)
		if apierrors.IsNotFound(err) {
			return nil, &unusable{ReasonClaimNotFound, fmt.Sprintf("storage.existingClaim %q does not exist in namespace %s", *claim, b.Namespace)}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if msg := consentMissing(b, &pvc); msg != "" {
			return nil, &unusable{ReasonClaimNotConsented, msg}, nil
		}
		if msg := capacityShort(b, &pvc, perClient); msg != "" {
			return nil, &unusable{ReasonClaimTooSmall, msg}, nil
		}
		if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
			return nil, nil, nil // a statically bound claim: no class to record
		}
		name = pvc.Spec.StorageClassName
	}
	if name == nil {
		var list storagev1.StorageClassList
		if err := r.List(ctx, &list); err != nil {
			return nil, nil, err
		}
		for i := range list.Items {
			if list.Items[i].Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
				return &list.Items[i], nil, nil
			}
		}
		return nil, &unusable{ReasonStorageClassNotFound, "storage.storageClassName is not set and the cluster has no default StorageClass"}, nil
	}
	var sc storagev1.StorageClass
	err := r.Get(ctx, client.ObjectKey{Name: *name}, &sc)
	if apierrors.IsNotFound(err) {
		return nil, &unusable{ReasonStorageClassNotFound, fmt.Sprintf("StorageClass %q not found: create it or set storage.storageClassName to an existing class", *name)}, nil
	}
	return &sc, nil, err
}

// ensureChildren creates whatever is missing, idempotently: claims, runner
// RBAC, the plan and client ConfigMaps, and the client Jobs. Before it
// creates the plan it also checks that no object holds a step ConfigMap's
// name, so a conflict fails the run before any I/O. What the pass read as
// b's (kids.owned) is taken as it is, without reading or building each
// child again: once a run has its children, a pass costs a list per kind,
// however many clients it has.
func (r *Reconciler) ensureChildren(ctx context.Context, b *v1alpha1.StorageBenchmark, d *spec.Run, kids *childLists) error {
	ensure := func(obj client.Object, owned bool) error {
		gvk, err := apiutil.GVKForObject(obj, r.Scheme())
		if err != nil {
			return err
		}
		if kids.has(gvk.Kind, obj.GetName()) {
			return nil
		}
		return r.ensure(ctx, b, obj, owned)
	}
	// The claims first: their provisioning, the longest wait of a run's
	// start, goes on while the rest is created.
	claims := claimNames(b)
	if !kids.has("PersistentVolumeClaim", claims...) {
		owned := b.Spec.Cleanup.Volumes != v1alpha1.VolumesRetain
		for _, pvc := range buildClaims(b) {
			if err := ensure(pvc, owned); err != nil {
				return err
			}
		}
	}
	// Within a kind, the children are created together, at most
	// childrenAtOnce at a time: each is a few round trips to the API
	// server (a read, the benchmark's own, the create).
	rbac := newAtOnce()
	for i := range int(b.Spec.Clients.Count) {
		if name := exchange.ClientName(b.Name, i); kids.has("ServiceAccount", name) && kids.has("Role", name) && kids.has("RoleBinding", name) {
			continue
		}
		sa, role, binding := buildClientRBAC(b, i)
		for _, o := range []client.Object{sa, role, binding} {
			rbac.Go(func() error { return ensure(o, true) })
		}
	}
	if err := rbac.Wait(); err != nil {
		return err
	}
	if !kids.has("ConfigMap", exchange.PlanName(b.Name)) {
		err := r.ensureExchange(ctx, b, exchange.PlanName(b.Name), exchange.ClientName(b.Name, 0), func() (*corev1.ConfigMap, error) {
			// Before the first child of the exchange: a step ConfigMap's name
			// held by somebody else fails the run before any I/O.
			if err := r.checkStepNames(ctx, b, d.StepsPlanned); err != nil {
				return nil, err
			}
			cm, err := buildPlanConfigMap(b, d)
			// When the run began, on this manager's clock: its deadlines count
			// from here, never from the API server's timestamps, which another
			// clock wrote.
			cm.Annotations = map[string]string{annotationBegan: r.now().UTC().Format(time.RFC3339Nano)}
			return cm, err
		})
		if err != nil {
			return err
		}
	}
	cms := newAtOnce()
	for i := range claims {
		name := exchange.ClientName(b.Name, i)
		if kids.has("ConfigMap", name) {
			continue
		}
		build := func() (*corev1.ConfigMap, error) { return buildClientConfigMap(b, i), nil }
		cms.Go(func() error { return r.ensureExchange(ctx, b, name, name, build) })
	}
	if err := cms.Wait(); err != nil {
		return err
	}
	opts := r.jobOptions(b, d)
	jobs := newAtOnce()
	for i, claim := range claims {
		if kids.has("Job", exchange.ClientName(b.Name, i)) {
			continue
		}
		jobs.Go(func() error { return ensure(buildJob(b, i, claim, opts), true) })
	}
	return jobs.Wait()
}

// childrenAtOnce bounds the children of one kind created at once.
const childrenAtOnce = 8

// newAtOnce is a group that runs at most childrenAtOnce functions at once
// and waits for them all; its Wait returns the first error.
func newAtOnce() *errgroup.Group {
	g := new(errgroup.Group)
	g.SetLimit(childrenAtOnce)
	return g
}

// childLists is one pass's read of b's namespace from the cache, for
// ensureChildren and observe alike: each kind of child listed once, and
// nothing copied from the cache, as a pass only reads what it lists (the
// lists' slices are the pass's own, their objects' fields the cache's).
type childLists struct {
	// owned holds, by kind, the names of the objects b owns (ownedBy):
	// the ones examine would take as b's from the cache, whatever their
	// other labels say. An object the cache does not hold as b's (a
	// stranger under a child's name, one without the operator's label) is
	// left to examine, which asks the API server.
	owned map[string]map[string]bool
	// The lists the observation reads, of every object of the kind in the
	// namespace, b's or not (observe keeps b's); the ConfigMaps are
	// metadata, the pods those labelled as b's clients.
	claims     []corev1.PersistentVolumeClaim
	configMaps []metav1.PartialObjectMetadata
	jobs       []batchv1.Job
	pods       []corev1.Pod
}

// has says whether b owns each of names of kind.
func (c *childLists) has(kind string, names ...string) bool {
	for _, name := range names {
		if !c.owned[kind][name] {
			return false
		}
	}
	return true
}

// readChildren lists b's children from the cache, once per kind.
func (r *Reconciler) readChildren(ctx context.Context, b *v1alpha1.StorageBenchmark) (*childLists, error) {
	c := &childLists{owned: map[string]map[string]bool{}}
	opts := []client.ListOption{client.InNamespace(b.Namespace), client.UnsafeDisableDeepCopy}
	var (
		claims corev1.PersistentVolumeClaimList
		jobs   batchv1.JobList
		pods   corev1.PodList
	)
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	for _, l := range []struct {
		list   client.ObjectList
		reader client.Reader
	}{
		{&corev1.ServiceAccountList{}, r.Client},
		{&rbacv1.RoleList{}, r.Client},
		{&rbacv1.RoleBindingList{}, r.Client},
		{&claims, r.Client},
		{cms, r.metadata()},
		{&jobs, r.Client},
	} {
		gvk, err := apiutil.GVKForObject(l.list, r.Scheme())
		if err != nil {
			return nil, err
		}
		if err := l.reader.List(ctx, l.list, opts...); err != nil {
			return nil, err
		}
		names := map[string]bool{}
		err = apimeta.EachListItem(l.list, func(o runtime.Object) error {
			if m, ok := o.(metav1.Object); ok && ownedBy(m, b) {
				names[m.GetName()] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		c.owned[strings.TrimSuffix(gvk.Kind, "List")] = names
	}
	if err := r.List(ctx, &pods, append(opts, clientLabels(b))...); err != nil {
		return nil, err
	}
	c.claims, c.configMaps, c.jobs, c.pods = claims.Items, cms.Items, jobs.Items, pods.Items
	return c, nil
}

// LostError says an exchange ConfigMap was deleted during the run.
type LostError struct{ Name string }

func (e *LostError) Error() string {
	return fmt.Sprintf("ConfigMap %s, through which the operator and the clients run the steps, was deleted during the run; the run cannot go on without losing a step", e.Name)
}

// ensureExchange creates the exchange ConfigMap name, as build makes it,
// unless b has it. One that is missing while the client Job job (created
// after it) exists was deleted under the run: re-creating it would hand the
// runners a new plan, so that is a *LostError.
func (r *Reconciler) ensureExchange(ctx context.Context, b *v1alpha1.StorageBenchmark, name, job string, build func() (*corev1.ConfigMap, error)) error {
	meta := metav1.ObjectMeta{Namespace: b.Namespace, Name: name}
	if exists, err := r.examine(ctx, b, &corev1.ConfigMap{ObjectMeta: meta}); exists || err != nil {
		return err
	}
	meta.Name = job
	if started, err := r.examine(ctx, b, &batchv1.Job{ObjectMeta: meta}); err != nil {
		return err
	} else if started {
		return &LostError{Name: name}
	}
	cm, err := build()
	if err != nil {
		return err
	}
	return r.create(ctx, b, cm, true)
}

// checkStepNames judges whatever holds the name of one of b's step
// ConfigMaps (see examine).
func (r *Reconciler) checkStepNames(ctx context.Context, b *v1alpha1.StorageBenchmark, steps int) error {
	for k := range steps {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: exchange.StepName(b.Name, k)}}
		if _, err := r.examine(ctx, b, cm); err != nil {
			return err
		}
	}
	return nil
}

// observe reads the benchmark's children from what the pass read (kids),
// keeping only those b controls: a labelled object of somebody else's is
// not a child. Of the steps' ConfigMaps (at most planned) it reads the
// data too.
func (r *Reconciler) observe(ctx context.Context, b *v1alpha1.StorageBenchmark, kids *childLists, planned int, memo *stepMemo) (*observed, error) {
	n := int(b.Spec.Clients.Count)
	o := &observed{claims: map[string]*corev1.PersistentVolumeClaim{}, clients: make([]*metav1.PartialObjectMetadata, n),
		jobs: make([]*batchv1.Job, n), pods: map[int][]corev1.Pod{}}
	if err := r.observeClaims(ctx, b, kids, o); err != nil {
		return nil, err
	}
	observeClients(b, kids, o)
	if err := r.observeNodes(ctx, o); err != nil {
		return nil, err
	}
	var err error
	if o.plan, err = r.wholePlan(ctx, b); err != nil {
		return nil, err
	}
	if o.order, o.ordered, err = orderOf(o.plan); err != nil {
		return nil, err
	}
	if o.steps, err = r.readSteps(ctx, b, planned, memo); err != nil {
		return nil, err
	}
	return o, nil
}

// observeClaims reads the run's claims: an existing claim live (it is
// not the operator's, so not in its cache), its own from what the pass
// read, and only those b controls.
func (r *Reconciler) observeClaims(ctx context.Context, b *v1alpha1.StorageBenchmark, kids *childLists, o *observed) error {
	var cached map[string]*corev1.PersistentVolumeClaim
	existing := b.Spec.Storage.ExistingClaim != nil
	if !existing {
		cached = make(map[string]*corev1.PersistentVolumeClaim, len(kids.claims))
		for i := range kids.claims {
			if pvc := &kids.claims[i]; ownedBy(pvc, b) {
				cached[pvc.Name] = pvc
			}
		}
	}
	for _, name := range claimNames(b) {
		if _, seen := o.claims[name]; seen {
			continue
		}
		pvc := cached[name]
		if existing {
			pvc = &corev1.PersistentVolumeClaim{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, pvc); apierrors.IsNotFound(err) {
				pvc = nil
			} else if err != nil {
				return err
			}
		}
		o.claims[name] = pvc
		if pvc != nil && pvc.Status.Phase == corev1.ClaimBound {
			o.bound++
			if c, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && (o.capacity == nil || c.Cmp(*o.capacity) < 0) {
				o.capacity = &c
			}
		}
	}
	return nil
}

// observeClients reads each client's ConfigMap (metadata), Job and pods,
// in creation order, keeping those b controls under the client's name and
// labels.
func observeClients(b *v1alpha1.StorageBenchmark, kids *childLists, o *observed) {
	n := len(o.clients)
	for i := range kids.configMaps {
		cm := &kids.configMaps[i]
		if k := clientOf(cm, b, n); k >= 0 {
			o.clients[k] = cm
		}
	}
	jobUIDs := map[types.UID]int{}
	for i := range kids.jobs {
		j := &kids.jobs[i]
		if k := clientOf(j, b, n); k >= 0 {
			o.jobs[k] = j
			jobUIDs[j.UID] = k
		}
	}
	pods := kids.pods // the pass's own slice: sorting it changes no object
	sort.SliceStable(pods, func(i, j int) bool {
		return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp)
	})
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(&p)
		if ref == nil {
			continue
		}
		if k, ours := jobUIDs[ref.UID]; ours {
			o.pods[k] = append(o.pods[k], p)
		}
	}
}

// clientLabels are the labels of b's clients' objects.
func clientLabels(b *v1alpha1.StorageBenchmark) client.MatchingLabels {
	return client.MatchingLabels{exchange.LabelBenchmark: b.Name, exchange.LabelRole: exchange.RoleClient}
}

// clientOf is the client whose ConfigMap or Job o is: b controls it, it
// has the client's name and labels (clientLabels); -1 otherwise.
func clientOf(o client.Object, b *v1alpha1.StorageBenchmark, n int) int {
	l := o.GetLabels()
	for k, v := range clientLabels(b) {
		if l[k] != v {
			return -1
		}
	}
	if k := clientIndex(o, n); k >= 0 && ownedBy(o, b) && o.GetName() == exchange.ClientName(b.Name, k) {
		return k
	}
	return -1
}

// clientIndex reads the client label; -1 when absent or out of range.
func clientIndex(o client.Object, n int) int {
	k, err := strconv.Atoi(o.GetLabels()[exchange.LabelClient])
	if err != nil || k < 0 || k >= n {
		return -1
	}
	return k
}

// observeNodes reads, from the cache, the Node of every client pod the
// kubelet reports Running (a pod's phase is the kubelet's to write, so a
// pod somebody made up with a client's labels and nodeName never gets
// here). A Node missing from the cache is looked up in the API server
// before it counts as deleted: the pod and Node caches fill independently.
func (r *Reconciler) observeNodes(ctx context.Context, o *observed) error {
	o.nodes = map[string]*corev1.Node{}
	for _, pods := range o.pods {
		for _, p := range pods {
			name := p.Spec.NodeName
			if _, seen := o.nodes[name]; seen || name == "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			var node corev1.Node
			err := r.Get(ctx, client.ObjectKey{Name: name}, &node)
			if apierrors.IsNotFound(err) && r.APIReader != nil {
				err = r.APIReader.Get(ctx, client.ObjectKey{Name: name}, &node)
			}
			switch {
			case apierrors.IsNotFound(err):
				o.nodes[name] = nil
			case err != nil:
				return err
			default:
				o.nodes[name] = &node
			}
		}
	}
	return nil
}

// schedulableNodes counts the cluster's Ready nodes that take new pods.
func (r *Reconciler) schedulableNodes(ctx context.Context) (int, error) {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	n := 0
	for i := range nodes.Items {
		if node := &nodes.Items[i]; nodeReady(node) == corev1.ConditionTrue && !node.Spec.Unschedulable {
			n++
		}
	}
	return n, nil
}

// clientNodes is the node of each client whose newest pod is scheduled
// (index → node) and how many clients that is.
func clientNodes(o *observed) (map[string][]int, int) {
	used, placed := map[string][]int{}, 0
	for i := range o.clients {
		pods := o.pods[i]
		if len(pods) == 0 || pods[len(pods)-1].Spec.NodeName == "" {
			continue
		}
		node := pods[len(pods)-1].Spec.NodeName
		used[node] = append(used[node], i)
		placed++
	}
	return used, placed
}

// nodeReady is a Node's Ready condition status (Unknown when it has none).
func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// spreadVerdict is where spreadAcrossNodes put the clients, judged once,
// with the first step's order: the condition is projected from the
// record, so the same children give the same status however the cluster
// changed since.
var spreadVerdict = recordedVerdict{
	condition: v1alpha1.ConditionClientsSpread,
	wanted:    func(b *v1alpha1.StorageBenchmark) bool { return b.Spec.Clients.SpreadAcrossNodes },
	due:       func(o protocol.StepOrder) bool { return o.Index == 0 && !o.Done },
	judge: func(ctx context.Context, r *Reconciler, _ *v1alpha1.StorageBenchmark, _ *spec.Run, obs *observed, _ protocol.StepOrder, now time.Time) (run.Verdict, error) {
		return r.spread(ctx, obs, now)
	},
	legacy: legacyAnnotationSpread,
	fromLegacy: func(value string, _ time.Time) (run.Verdict, bool) {
		var rec struct {
			Spread  bool      `json:"spread"`
			Reason  string    `json:"reason"`
			Message string    `json:"message"`
			At      time.Time `json:"at"`
		}
		if json.Unmarshal([]byte(value), &rec) != nil {
			return run.Verdict{}, false
		}
		return run.Judged(v1alpha1.ConditionClientsSpread, rec.Spread, rec.Reason, rec.Message, rec.At), true
	},
}

// spreadOf judges where the clients went: on a node each, or not. The
// spread is a preference (builders.go), so volumes pinned to a node, a
// node selector or taints may still put clients together; the message says
// which clients share which node. schedulable is the cluster's Ready,
// schedulable nodes when the clients share nodes (-1: not counted).
func spreadOf(obs *observed, schedulable int, at time.Time) run.Verdict {
	spread := func(ok bool, reason, msg string) run.Verdict {
		return run.Judged(v1alpha1.ConditionClientsSpread, ok, reason, clip(msg, MaxMessage), at)
	}
	used, placed := clientNodes(obs)
	if len(used) == placed {
		return spread(true, ReasonOnDistinctNodes, fmt.Sprintf("%d clients on %d distinct nodes", placed, len(used)))
	}
	var shared []string
	for _, name := range slices.Sorted(maps.Keys(used)) {
		if len(used[name]) > 1 {
			shared = append(shared, fmt.Sprintf("%s runs clients %s", clip(name, 253), strings.Trim(fmt.Sprint(used[name]), "[]")))
		}
	}
	nodes := "nodes"
	if len(used) == 1 {
		nodes = "node"
	}
	msg := fmt.Sprintf("%d clients on %d %s: %s", placed, len(used), nodes, strings.Join(shared, "; "))
	if schedulable >= 0 && schedulable < placed {
		return spread(false, ReasonFewerNodes, fmt.Sprintf("%s; the cluster had %d Ready, schedulable nodes for %d clients when the first step was ordered",
			msg, schedulable, placed))
	}
	return spread(false, ReasonSharingNodes, msg+" (the spread is a preference: volumes bound to a node, nodeSelector or taints can outweigh it)")
}
