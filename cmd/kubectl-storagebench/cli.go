package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
)

// Exit codes (docs/kubectl-plugin.md lists them).
const (
	// exitOK: the command did what it was asked; for wait and watch, the run
	// completed (and, with --for=slo, every SLO was met).
	exitOK = 0
	// exitError: bad usage, the benchmark does not exist, the API server
	// or a file could not be read.
	exitError = 1
	// exitFailed: the run failed (the Failed condition is True).
	exitFailed = 2
	// exitSLONotMet: the run completed but its SLOs were not met, or it has
	// no objectives (wait --for=slo).
	exitSLONotMet = 3
	// exitTimeout: wait gave up after --timeout.
	exitTimeout = 4
	// exitRegressed: compare --baseline found the run regressed against
	// its baseline.
	exitRegressed = 5
	// exitRefused: plan found that the operator would refuse the
	// benchmark (an invalid spec, a missing class or claim, the policy,
	// storage that cannot serve it).
	exitRefused = 6
)

// codeError ends the command with an exit code; err (optional) is printed.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

// run executes the plugin with args and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// controller-runtime's client logs through its global logger; without
	// one it complains after 30 s.
	ctrllog.SetLogger(logr.Discard())
	// Messages quote benchmarks' text (names, conditions, errors): what
	// reaches standard error is escaped as report.SafeText escapes it, an
	// error as report.SafeLine does (one line).
	stderr = safeWriter{stderr}
	a := &app{out: stdout, errOut: stderr, now: time.Now}
	root := a.command()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		if ce.err != nil {
			fmt.Fprintln(stderr, "error:", report.SafeLine(ce.err.Error()))
		}
		return ce.code
	}
	fmt.Fprintln(stderr, "error:", report.SafeLine(err.Error()))
	return exitError
}

// safeWriter writes text as report.SafeText escapes it: terminal control
// characters in what is written are shown, not obeyed. Each write must
// hold whole characters (one fmt.Fprint does).
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, report.SafeText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// app holds the global flags and where benchmarks come from.
type app struct {
	out, errOut io.Writer
	now         func() time.Time

	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	fromFiles []string

	// resolved on first use
	client    client.WithWatch
	namespace string
	saved     *savedObjects
}

// savedObjects are what the --from-file files hold, each file read once.
type savedObjects struct {
	benchmarks []v1alpha1.StorageBenchmark
	operations []v1alpha1.VolumeOperationsBenchmark
	configMaps []corev1.ConfigMap
}

func (a *app) command() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-storagebench",
		Short: "Inspect, follow and plot storagebench StorageBenchmarks",
		Long: `kubectl storagebench reads StorageBenchmarks (storagebench.io/v1alpha1):
lists them, prints a run's steps and summary, follows a run, waits for it
with CI-friendly exit codes and renders the ops–latency curve. It also
reads VolumeOperationsBenchmarks (sbops): list sbops, status sbops/NAME and
report sbops/NAME.

Benchmarks come from the cluster (kubeconfig, --context, --namespace as
kubectl) or, with --from-file, from saved objects (kubectl get sbench NAME
-o yaml > run.yaml).

Exit codes: 0 success; 1 error (usage, not found, API); 2 the run failed;
3 SLOs not met (wait --for=slo); 4 timed out (wait); 5 regressed
(compare --baseline); 6 the operator would refuse the benchmark (plan).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
	}
	a.loading = clientcmd.NewDefaultClientConfigLoadingRules()
	a.overrides = &clientcmd.ConfigOverrides{}
	flags := root.PersistentFlags()
	flags.StringVar(&a.loading.ExplicitPath, "kubeconfig", "", "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(a.overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	flags.StringArrayVarP(&a.fromFiles, "from-file", "f", nil, "Read benchmarks from a saved object (YAML or JSON, a single object or a List) instead of the cluster; repeatable.")

	root.AddCommand(a.listCommand(), a.statusCommand(), a.watchCommand(), a.waitCommand(), a.reportCommand(), a.compareCommand(), a.baselineCommand(), a.schedulesCommand(), a.planCommand())
	return root
}

// connect builds the API client and resolves the namespace once.
func (a *app) connect() (client.WithWatch, string, error) {
	if a.client != nil {
		return a.client, a.namespace, nil
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(a.loading, a.overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	cfg.UserAgent = "kubectl-storagebench"
	// kubectl's own limits (client-go's default of 5 requests a second
	// would make reading a run's step records, one request each, crawl).
	cfg.QPS, cfg.Burst = 50, 300
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	// client-go's types: plan reads storage classes and claims.
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	a.client, a.namespace = c, ns
	return c, ns, nil
}

// fromFile reports whether benchmarks come from --from-file.
func (a *app) fromFile() bool { return len(a.fromFiles) > 0 }

// readFiles returns the benchmarks of every --from-file.
func (a *app) readFiles() ([]v1alpha1.StorageBenchmark, error) {
	saved, err := a.load()
	if err != nil {
		return nil, err
	}
	return slices.Clone(saved.benchmarks), nil
}

// load reads and decodes every --from-file ("-" is standard input) on
// first use: the benchmarks and the ConfigMaps saved with them. A file may
// hold ConfigMaps alone (a pinned baseline, or steps' records saved
// apart), as long as the files hold a benchmark.
func (a *app) load() (*savedObjects, error) {
	saved, err := a.loadFiles()
	if err != nil {
		return nil, err
	}
	if len(saved.benchmarks) == 0 {
		return nil, fmt.Errorf("%s: no StorageBenchmark found", strings.Join(a.fromFiles, ", "))
	}
	return saved, nil
}

// loadFiles reads and decodes every --from-file once: StorageBenchmarks,
// VolumeOperationsBenchmarks and ConfigMaps, whichever they hold.
func (a *app) loadFiles() (*savedObjects, error) {
	if a.saved != nil {
		return a.saved, nil
	}
	saved := &savedObjects{}
	for _, f := range a.fromFiles {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return nil, err
		}
		s, err := apireport.DecodeSaved(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		saved.benchmarks = append(saved.benchmarks, s.Benchmarks...)
		saved.operations = append(saved.operations, s.Operations...)
		saved.configMaps = append(saved.configMaps, s.ConfigMaps...)
	}
	a.saved = saved
	return saved, nil
}

// get returns one benchmark by name; from files, an empty name is allowed
// when they hold exactly one.
func (a *app) get(ctx context.Context, name string) (*v1alpha1.StorageBenchmark, error) {
	if a.fromFile() {
		sbs, err := a.readFiles()
		if err != nil {
			return nil, err
		}
		if name == "" {
			if len(sbs) != 1 {
				return nil, fmt.Errorf("the files hold %d benchmarks: name one", len(sbs))
			}
			return &sbs[0], nil
		}
		return findSaved(sbs, kindBenchmark, name, a.fromFiles)
	}
	if name == "" {
		return nil, errors.New("name a benchmark")
	}
	return getNamed[v1alpha1.StorageBenchmark](ctx, a, kindBenchmark, name)
}

// object is a pointer to an API object of type T.
type object[T any] interface {
	*T
	client.Object
}

// getNamed reads an object of the namespace from the cluster; one that
// is not there is "KIND "NAME" not found in namespace "NS"".
func getNamed[T any, P object[T]](ctx context.Context, a *app, kind, name string) (P, error) {
	c, ns, err := a.connect()
	if err != nil {
		return nil, err
	}
	obj := P(new(T))
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %q not found in namespace %q", kind, name, ns)
		}
		return nil, err
	}
	return obj, nil
}

// findSaved returns the object of items (read from files) named name;
// one that is not there is "KIND "NAME" not found in FILES".
func findSaved[T any, P object[T]](items []T, kind, name string, files []string) (P, error) {
	for i := range items {
		if obj := P(&items[i]); obj.GetName() == name {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("%s %q not found in %s", kind, name, strings.Join(files, ", "))
}

// listObjects lists objects of the namespace (of every namespace with all)
// from the cluster into list.
func (a *app) listObjects(ctx context.Context, list client.ObjectList, all bool) error {
	c, ns, err := a.connect()
	if err != nil {
		return err
	}
	opts := []client.ListOption{}
	if !all {
		opts = append(opts, client.InNamespace(ns))
	}
	return c.List(ctx, list, opts...)
}

// sortByName sorts items by namespace, then name, as kubectl lists them.
func sortByName[T any, P object[T]](items []T) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := P(&items[i]), P(&items[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

// stepConfigMap returns step k's ConfigMap of a benchmark: from the
// --from-file objects, or from the cluster; nil when there is none.
func (a *app) stepConfigMap(ctx context.Context, sb *v1alpha1.StorageBenchmark, k int) (*corev1.ConfigMap, error) {
	return a.configMap(ctx, sb.Namespace, exchange.StepName(sb.Name, k))
}

// noRecord says that step k of a benchmark has no ConfigMap, and, for
// saved objects, how to save it.
func (a *app) noRecord(sb *v1alpha1.StorageBenchmark, k int) error {
	name := exchange.StepName(sb.Name, k)
	if a.fromFile() {
		return fmt.Errorf("ConfigMap %s not found in %s: save it with the benchmark (kubectl get sbench,cm -o yaml)", name, strings.Join(a.fromFiles, ", "))
	}
	return fmt.Errorf("step %d of %s has no record (ConfigMap %s not found)", k+1, sb.Name, name)
}

// configMap returns a ConfigMap of a benchmark's namespace: from the
// --from-file objects (where one saved without a namespace matches any),
// or from the cluster; nil when there is none.
func (a *app) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	if a.fromFile() {
		saved, err := a.load()
		if err != nil {
			return nil, err
		}
		for i := range saved.configMaps {
			cm := &saved.configMaps[i]
			if cm.Name == name && (cm.Namespace == "" || cm.Namespace == namespace) {
				return cm, nil
			}
		}
		return nil, nil
	}
	c, _, err := a.connect()
	if err != nil {
		return nil, err
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &cm, nil
}

// getAll returns benchmarks by name, in order.
func (a *app) getAll(ctx context.Context, names []string) ([]v1alpha1.StorageBenchmark, error) {
	if a.fromFile() && len(names) == 0 {
		return a.readFiles()
	}
	var out []v1alpha1.StorageBenchmark
	for _, n := range names {
		sb, err := a.get(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *sb)
	}
	return out, nil
}

// follow calls fn with the benchmark now and after every change (and every
// tick, when tick > 0, to refresh estimates) until fn reports done, fn
// fails or ctx ends. A watch that closes or expires is re-established from
// a fresh read.
func (a *app) follow(ctx context.Context, name string, tick time.Duration, fn func(*v1alpha1.StorageBenchmark) (bool, error)) error {
	if a.fromFile() {
		sb, err := a.get(ctx, name)
		if err != nil {
			return err
		}
		_, err = fn(sb)
		return err
	}
	c, ns, err := a.connect()
	if err != nil {
		return err
	}
	var ticks <-chan time.Time
	if tick > 0 {
		t := time.NewTicker(tick)
		defer t.Stop()
		ticks = t.C
	}
	for {
		sb, err := a.get(ctx, name)
		if err != nil {
			return err
		}
		if done, err := fn(sb); done || err != nil {
			return err
		}
		w, err := c.Watch(ctx, &v1alpha1.StorageBenchmarkList{}, &client.ListOptions{
			Namespace:     ns,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name),
			Raw:           &metav1.ListOptions{ResourceVersion: sb.ResourceVersion},
		})
		if err != nil {
			return err
		}
		done, err := consume(ctx, w, sb, ticks, fn)
		w.Stop()
		if done || err != nil {
			return err
		}
		// The watch ended (the server closes watches after a while, or the
		// resource version expired): pause, read again and watch again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// consume feeds watch events to fn until done, an error, or the watch ends
// (false, nil: the caller re-reads and watches again).
func consume(ctx context.Context, w watch.Interface, last *v1alpha1.StorageBenchmark, ticks <-chan time.Time, fn func(*v1alpha1.StorageBenchmark) (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-ticks:
			if done, err := fn(last); done || err != nil {
				return done, err
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				sb, isSB := ev.Object.(*v1alpha1.StorageBenchmark)
				if !isSB {
					continue
				}
				last = sb
				if done, err := fn(sb); done || err != nil {
					return done, err
				}
			case watch.Deleted:
				return false, fmt.Errorf("storagebenchmark %q was deleted", last.Name)
			case watch.Error:
				// Typically "too old resource version": start over.
				return false, nil
			}
		}
	}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
