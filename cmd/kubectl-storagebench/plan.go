package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/controllers"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/plan"
	"github.com/storagebench/storagebench/internal/policy"
	"github.com/storagebench/storagebench/internal/protocol"
	"github.com/storagebench/storagebench/internal/runner"
	"github.com/storagebench/storagebench/internal/spec"
)

// managerFlags are the manager's flags that decide what it makes of a
// benchmark (cmd/manager): plan takes them under the same names and
// defaults, and reads them as the manager does.
type managerFlags struct {
	runnerImage, pullPolicy                   string
	images, tolerationKeys, nodeSelectorKeys  string
	maxClientMemory                           string
	claimBind, ready, startLead, nextStepLead time.Duration
}

func (f *managerFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.runnerImage, "runner-image", controllers.DefaultRunnerImage, "the manager's --runner-image: the default client image")
	fl.StringVar(&f.pullPolicy, "runner-image-pull-policy", string(corev1.PullIfNotPresent), "the manager's --runner-image-pull-policy")
	fl.StringVar(&f.images, "allowed-runner-images", "", "the manager's "+policy.FlagImages)
	fl.StringVar(&f.tolerationKeys, "allowed-toleration-keys", "", "the manager's "+policy.FlagTolerationKeys)
	fl.StringVar(&f.nodeSelectorKeys, "allowed-node-selector-keys", "", "the manager's "+policy.FlagNodeSelectorKeys)
	fl.StringVar(&f.maxClientMemory, "max-client-memory", policy.DefaultMaxClientMemory.String(), "the manager's "+policy.FlagMaxClientMemory)
	fl.DurationVar(&f.claimBind, "claim-bind-timeout", 0, "the manager's --claim-bind-timeout (0: its default)")
	fl.DurationVar(&f.ready, "ready-timeout", 0, "the manager's --ready-timeout (0: its default)")
	fl.DurationVar(&f.startLead, "step-start-lead", 0, "the manager's --step-start-lead (0: its default)")
	fl.DurationVar(&f.nextStepLead, "next-step-start-lead", 0, "the manager's --next-step-start-lead (0: its default)")
}

// reconciler is a reconciler configured as the manager of these flags,
// reading the cluster through c.
func (f *managerFlags) reconciler(c client.Client) (*controllers.Reconciler, error) {
	pol, err := policy.FromFlags(f.images, f.tolerationKeys, f.nodeSelectorKeys, f.maxClientMemory)
	if err != nil {
		return nil, err
	}
	return &controllers.Reconciler{Client: c, APIReader: c, Policy: pol,
		Jobs:             controllers.JobOptions{Image: f.runnerImage, ImagePullPolicy: corev1.PullPolicy(f.pullPolicy)},
		ClaimBindTimeout: f.claimBind, ReadyTimeout: f.ready, StartLead: f.startLead, NextStepLead: f.nextStepLead}, nil
}

func (a *app) planCommand() *cobra.Command {
	var mf managerFlags
	var fioStep int
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Dry run a benchmark: its steps divided per client and fio job, the fio job files, the objects, the longest it can take, and whether the operator would run it",
		Long: `Dry run the StorageBenchmark of FILE (-f, - for standard input) against
the cluster, creating nothing. It prints:

  - the checks: the CRD's schema and CEL rules (a server-side dry-run
    create), the operator's own validation of the spec, and the operator's
    admission on the live cluster (the storage class, or the existing claim
    and its owner's consent; the class's provisioner and driver; whether
    they serve the access and volume mode; the policy; the clients' memory);
  - every step's offered load divided per client and per fio job, as the
    runners divide it;
  - each client's fio job file for one step (--fio-step);
  - the objects the operator would create, with the Jobs' image, memory
    limit and activeDeadlineSeconds;
  - the run's allowances and the longest it can take.

The policy and the timeouts are the manager's flags: plan cannot read
them from the manager, so it takes the same flags, with the manager's
defaults (--runner-image, --allowed-runner-images, --allowed-toleration-keys,
--allowed-node-selector-keys, --max-client-memory, --claim-bind-timeout,
--ready-timeout, --step-start-lead, --next-step-start-lead). Give plan the
values your manager runs with (its Deployment's args, or the chart's
values) to be judged as it judges.

Exit codes: 0 the operator would run the benchmark; 6 it would refuse it
(the check and its message are printed); 1 error (usage, file, API).`,
		Example: `  kubectl storagebench plan -f oltp.yaml -n storagebench
  kubectl storagebench plan -f oltp.yaml --allowed-runner-images=registry.example/runner:1.4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.plan(cmd.Context(), &mf, fioStep)
		},
	}
	mf.bind(cmd)
	cmd.Flags().IntVar(&fioStep, "fio-step", 1, "the step whose fio job files are printed, from 1")
	return cmd
}

// refusal is a check that would stop the benchmark.
type refusal struct{ check, reason, message string }

// plan dry runs the one benchmark of -f.
func (a *app) plan(ctx context.Context, mf *managerFlags, fioStep int) error {
	if !a.fromFile() {
		return errors.New("plan reads the benchmark to dry run from -f FILE")
	}
	sbs, err := a.readFiles()
	if err != nil {
		return err
	}
	if len(sbs) != 1 {
		return fmt.Errorf("the files hold %d benchmarks: plan dry runs one", len(sbs))
	}
	c, ns, err := a.connect()
	if err != nil {
		return err
	}
	r, err := mf.reconciler(c)
	if err != nil {
		return err
	}
	b := &sbs[0]
	if b.Namespace == "" {
		b.Namespace = ns
	}
	b.ResourceVersion, b.Status = "", v1alpha1.StorageBenchmarkStatus{}
	fmt.Fprintf(a.out, "Benchmark %s/%s: a dry run, nothing is created\n\nChecks\n", b.Namespace, b.Name)
	// The API server defaults the spec as it would store it: the operator
	// sees the defaulted object.
	stored := b.DeepCopy()
	if err := c.Create(ctx, stored, client.DryRunAll); err != nil {
		// The user's own permissions are not the operator's verdict: an
		// RBAC refusal is an error (exit 1); an admission webhook's or
		// policy's refusal, a schema's or an existing name is a refusal.
		rbac := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource")
		if rbac || !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return a.refuse(refusal{"the CRD's schema and CEL rules (server dry run)", string(apierrors.ReasonForError(err)), err.Error()})
	}
	fmt.Fprintln(a.out, "  the CRD's schema and CEL rules (server dry run): ok")
	d, err := spec.Of(stored)
	if err != nil {
		return a.refuse(refusal{"the operator's validation of the spec", controllers.ReasonInvalidSpec, err.Error()})
	}
	fmt.Fprintln(a.out, "  the operator's validation of the spec: ok")
	dry, err := r.DryRun(ctx, stored, &d)
	if err != nil {
		return err
	}
	writeStorage(a.out, dry)
	writePolicy(a.out, r)
	if dry.Refusal != nil {
		return a.refuse(refusal{"the operator's admission", dry.Refusal.Reason, dry.Refusal.Message})
	}
	fmt.Fprintln(a.out, "  the operator's admission: ok")
	if err := writeSteps(a.out, &d); err != nil {
		return a.refuse(refusal{"the plan's steps", controllers.ReasonInvalidPlan, err.Error()})
	}
	if err := writeJobFiles(a.out, stored, &d, fioStep); err != nil {
		return err
	}
	writeObjects(a.out, stored, d.StepsPlanned, dry)
	writeTiming(a.out, &d, dry)
	return nil
}

// refuse prints a refusal and ends with exitRefused.
func (a *app) refuse(r refusal) error {
	fmt.Fprintf(a.out, "  %s: REFUSED (%s): %s\n", r.check, r.reason, r.message)
	return &codeError{code: exitRefused, err: fmt.Errorf("the operator would refuse this benchmark: %s: %s: %s", r.check, r.reason, r.message)}
}

func writeStorage(w io.Writer, dry *controllers.DryRun) {
	class := "none (a statically bound existing claim, or none found)"
	if sc := dry.StorageClass; sc != nil {
		class = fmt.Sprintf("StorageClass %s, provisioner %s", sc.Name, sc.Provisioner)
		if dry.Driver != "" {
			class += ", driver " + dry.Driver
		}
	}
	fmt.Fprintf(w, "  storage: %s; access mode %s, volume mode %s\n", class, dry.AccessMode, dry.VolumeMode)
	if dry.Warning != "" {
		fmt.Fprintf(w, "  storage warning: %s\n", dry.Warning)
	}
}

func writePolicy(w io.Writer, r *controllers.Reconciler) {
	p := r.Policy
	max := p.MaxMemory()
	fmt.Fprintf(w, "  policy (plan's flags): images %s; toleration keys %s; node selector keys %s; client memory at most %s\n",
		strings.Join(p.Images(r.Jobs.Image), ", "), listOrNone(p.AllowedTolerationKeys), listOrNone(p.AllowedNodeSelectorKeys), max.String())
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// unitOf names the unit of a step's rates and of a job's share.
func unitOf(s plan.Step) string {
	if s.OfferedBytesPerSec > 0 {
		return "B/s"
	}
	return "IOPS"
}

// curvePending is a curve step whose rate depends on the measured maximum.
func curvePending(s plan.Step) bool { return s.PercentOfMax > 0 && !s.RateLimited() }

// writeSteps prints every planned step divided over the clients and their
// fio jobs by plan.Divide, as each runner divides its order.
func writeSteps(w io.Writer, d *spec.Run) error {
	steps := plan.Steps(d.Load)
	t := d.Topology
	fmt.Fprintf(w, "\nSteps: %d planned", len(steps))
	if most := d.StepsPlanned; most > len(steps) {
		fmt.Fprintf(w, " (up to %d with reruns of unsteady steps)", most)
	}
	fmt.Fprintf(w, ", each %s measured after a %s ramp, over %d clients × %d fio jobs\n", d.Load.StepDuration, d.Load.RampTime, t.Clients, t.JobsPerClient)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tOFFERED\tCLIENT\tJOB\tIODEPTH\tREAD\tWRITE")
	for _, s := range steps {
		if curvePending(s) {
			fmt.Fprintf(tw, "%d\t%d %% of the measured maximum\t(divided once the maximum is known)\n", s.Index+1, s.PercentOfMax)
			continue
		}
		loads, err := plan.Divide(s, t, d.Workload)
		if err != nil {
			return err
		}
		offered := s.Load()
		for ci, jobs := range loads {
			if len(jobs) == 0 {
				fmt.Fprintf(tw, "%d\t%s\t%d\t-\t-\tidle\tidle\n", s.Index+1, offered, ci)
			}
			for j, l := range jobs {
				read, write := "-", "-"
				if s.RateLimited() {
					read = fmt.Sprintf("%d %s", l.ReadIOPS+l.ReadBytesPerSec, unitOf(s))
					write = fmt.Sprintf("%d %s", l.WriteIOPS+l.WriteBytesPerSec, unitOf(s))
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%s\t%s\n", s.Index+1, offered, ci, j, l.IODepth, read, write)
			}
		}
	}
	return tw.Flush()
}

// writeJobFiles prints each client's fio job file for step k (from 1), as
// its runner renders it.
func writeJobFiles(w io.Writer, b *v1alpha1.StorageBenchmark, d *spec.Run, k int) error {
	steps := plan.Steps(d.Load)
	if k < 1 || k > len(steps) {
		return fmt.Errorf("--fio-step %d: the load plans steps 1 to %d", k, len(steps))
	}
	s := steps[k-1]
	if curvePending(s) {
		return fmt.Errorf("--fio-step %d: its rate depends on the maximum the curve measures; choose an unthrottled step", k)
	}
	order := protocol.StepOrder{Index: s.Index, Step: s, Duration: d.Load.StepDuration, Ramp: d.Load.RampTime}
	for i := range int(d.Topology.Clients) {
		if s.Idle(i, d.Topology) {
			fmt.Fprintf(w, "\nclient %d idles through step %d: no fio\n", i, k)
			continue
		}
		p := spec.ClientPlan(b, d)
		// As each runner sets them (exchange.Client.LoadPlan).
		p.Client, p.Seed = i, protocol.ClientSeed(b.Name, i)
		job, err := runner.StepJobFile(p, order)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nfio job file of client %d, step %d (without the wait for the step's instant):\n", i, k)
		for _, line := range strings.Split(strings.TrimRight(job, "\n"), "\n") {
			if line != "" {
				line = "  " + line
			}
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

// writeObjects lists the children the operator would create, in order.
func writeObjects(w io.Writer, b *v1alpha1.StorageBenchmark, steps int, dry *controllers.DryRun) {
	fmt.Fprintln(w, "\nObjects the operator would create, in order (owned by the benchmark)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tDETAILS")
	for _, o := range dry.Objects {
		kind, details := describe(o)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", kind, o.GetName(), details)
	}
	fmt.Fprintf(tw, "ConfigMap\t%s … %s\tstep records, written as steps end\n",
		exchange.StepName(b.Name, 0), exchange.StepName(b.Name, steps-1))
	_ = tw.Flush()
}

func describe(o client.Object) (kind, details string) {
	switch o := o.(type) {
	case *corev1.ServiceAccount:
		return "ServiceAccount", "client " + o.Labels[exchange.LabelClient] + "'s identity"
	case *rbacv1.Role:
		return "Role", "reads the plan, patches its own ConfigMap"
	case *rbacv1.RoleBinding:
		return "RoleBinding", "binds the Role to the ServiceAccount"
	case *corev1.PersistentVolumeClaim:
		size := o.Spec.Resources.Requests[corev1.ResourceStorage]
		class := "the default class"
		if o.Spec.StorageClassName != nil {
			class = "class " + *o.Spec.StorageClassName
		}
		return "PersistentVolumeClaim", fmt.Sprintf("%s, %s, %s, %s", size.String(), class, o.Spec.AccessModes[0], *o.Spec.VolumeMode)
	case *corev1.ConfigMap:
		if o.Labels[exchange.LabelRole] == exchange.RolePlan {
			return "ConfigMap", "the plan every client reads, then the step orders"
		}
		return "ConfigMap", "client " + o.Labels[exchange.LabelClient] + "'s reports and results"
	case *batchv1.Job:
		pod := o.Spec.Template.Spec
		c := pod.Containers[0]
		mem := c.Resources.Limits[corev1.ResourceMemory]
		return "Job", fmt.Sprintf("image %s (pull %s), memory limit %s, activeDeadlineSeconds %d, claim %s",
			c.Image, c.ImagePullPolicy, mem.String(), *o.Spec.ActiveDeadlineSeconds, pod.Volumes[0].PersistentVolumeClaim.ClaimName)
	}
	return fmt.Sprintf("%T", o), ""
}

// writeTiming prints the run's allowances and the longest it can take.
func writeTiming(w io.Writer, d *spec.Run, dry *controllers.DryRun) {
	n := time.Duration(d.StepsPlanned)
	fmt.Fprintf(w, "\nTiming\n")
	fmt.Fprintf(w, "  measuring: %d steps × (%s ramp + %s) = %s\n", d.StepsPlanned, d.Load.RampTime, d.Load.StepDuration, n*(d.Load.RampTime+d.Load.StepDuration))
	fmt.Fprintf(w, "  claims bound within %s; clients ready within %s of the start\n", dry.ClaimBind, dry.Ready)
	fmt.Fprintf(w, "  start leads: %s before the first step, %s before each later one; results within %s of a step's end\n",
		dry.StartLead, dry.NextStepLead, dry.ResultGrace)
	fmt.Fprintf(w, "  longest run, every allowance used (the Jobs' activeDeadlineSeconds): %s\n", dry.Deadline)
}
