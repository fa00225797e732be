package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/analysis"
	"github.com/storagebench/storagebench/internal/exchange"
	"github.com/storagebench/storagebench/internal/report"
	"github.com/storagebench/storagebench/internal/report/apireport"
	"github.com/storagebench/storagebench/internal/report/figure"
)

func (a *app) listCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list [sbops]",
		Short: "List benchmarks: status, class, profile, step, peak, p99 at the peak, SLO, age; or VolumeOperationsBenchmarks (sbops)",
		Long: `List StorageBenchmarks: status, class, profile, step, peak, p99 at the peak,
SLO and age.

list sbops (or volumeoperationsbenchmarks) lists VolumeOperationsBenchmarks
instead: status (the Ready condition's reason), class, the step under way
(or the operation steps recorded of those planned), SLO and age.`,
		Example: `  kubectl storagebench list -n storagebench
  kubectl storagebench list -A
  kubectl storagebench list sbops -n storagebench`,
		Args:    cobra.MaximumNArgs(1),
		Aliases: []string{"ls", "get"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				switch kindOf(strings.TrimSuffix(strings.ToLower(args[0]), "."+v1alpha1.GroupVersion.Group)) {
				case kindBenchmark:
				case kindOperations:
					return a.listOperations(cmd.Context(), all)
				default:
					return fmt.Errorf("list lists storagebenchmarks (sbench) or volumeoperationsbenchmarks (sbops), not %q", args[0])
				}
			}
			var items []v1alpha1.StorageBenchmark
			if a.fromFile() {
				sbs, err := a.readFiles()
				if err != nil {
					return err
				}
				items = sbs
			} else {
				var list v1alpha1.StorageBenchmarkList
				if err := a.listObjects(cmd.Context(), &list, all); err != nil {
					return err
				}
				items = list.Items
			}
			if len(items) == 0 {
				fmt.Fprintln(a.errOut, "No storagebenchmarks found.")
				return nil
			}
			sortByName(items)
			t := apireport.ListTable(items, a.now(), all)
			return t.Text(a.out)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List benchmarks in every namespace.")
	return cmd
}

func (a *app) schedulesCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "schedules [NAME]",
		Short: "List StorageBenchmarkSchedules, or print one with a row per kept run: state, peak, performance at the latency target, SLO",
		Example: `  kubectl storagebench schedules -n storage-slo
  kubectl storagebench schedules oltp-nightly -n storage-slo`,
		Args:    cobra.MaximumNArgs(1),
		Aliases: []string{"schedule", "sbsched"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.fromFile() {
				return errors.New("schedules reads the cluster: --from-file is not supported")
			}
			if len(args) == 1 {
				s, err := getNamed[v1alpha1.StorageBenchmarkSchedule](cmd.Context(), a, kindSchedule, args[0])
				if err != nil {
					return err
				}
				return apireport.WriteScheduleStatus(a.out, s, a.now())
			}
			var list v1alpha1.StorageBenchmarkScheduleList
			if err := a.listObjects(cmd.Context(), &list, all); err != nil {
				return err
			}
			if len(list.Items) == 0 {
				fmt.Fprintln(a.errOut, "No storagebenchmarkschedules found.")
				return nil
			}
			t := apireport.ScheduleTable(list.Items, a.now(), all)
			return t.Text(a.out)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List schedules in every namespace.")
	return cmd
}

func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME | status sbops/NAME",
		Short: "Print a run: state, workload, storage used, one row per step, peak, knee, performance at the latency target, SLO verdicts",
		Long: `Print a StorageBenchmark's run: state, workload, storage used, one row per
step, peak, knee, performance at the latency target and SLO verdicts.

status sbops/NAME (or volumeoperationsbenchmark/NAME) prints a
VolumeOperationsBenchmark: state, storage, the operations and
concurrencies, the step under way, then per operation a row per step
(concurrency, succeeded, failed, timed out, p50, p90, p99, max, per minute,
the knee, the first failure's reason), and each operation's time per
operation with its 95 % confidence interval, the objectives' verdicts and
notes.`,
		Example: `  kubectl storagebench status oltp -n storagebench
  kubectl storagebench status --from-file run.yaml
  kubectl storagebench status sbops/ontap-nas-operations -n storagebench`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name := splitRef(argOr(args))
			switch kindOf(kind) {
			case kindBenchmark:
			case kindOperations:
				return a.operationsStatus(cmd.Context(), name)
			default:
				return fmt.Errorf("status prints a storagebenchmark (NAME) or a volumeoperationsbenchmark (sbops/NAME), not %q", argOr(args))
			}
			sb, err := a.get(cmd.Context(), name)
			if err != nil {
				return err
			}
			return apireport.WriteStatus(a.out, sb, a.now())
		},
	}
}

func argOr(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func (a *app) watchCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "watch NAME",
		Short:   "Follow a run: step i/N, time left, the last step's achieved load, a progress bar; exits when it completes (0) or fails (2)",
		Example: `  kubectl storagebench watch oltp -n storagebench`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tty := isTerminal(a.out)
			var last string
			var state report.State
			tick := 30 * time.Second
			if tty {
				tick = time.Second
			}
			err := a.follow(cmd.Context(), args[0], tick, func(sb *v1alpha1.StorageBenchmark) (bool, error) {
				p := apireport.ProgressOf(sb, a.now())
				state = p.State
				line := p.Line()
				if line != last {
					if tty {
						fmt.Fprint(a.out, "\r\033[K"+line)
					} else {
						fmt.Fprintln(a.out, line)
					}
					last = line
				}
				return state == report.StateComplete || state == report.StateFailed, nil
			})
			if tty && last != "" {
				fmt.Fprintln(a.out)
			}
			if err != nil {
				return err
			}
			switch state {
			case report.StateFailed:
				return &codeError{code: exitFailed}
			case report.StateComplete:
				return nil
			}
			// From a file: the run is not over.
			return nil
		},
	}
}

func (a *app) waitCommand() *cobra.Command {
	var forWhat string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a run completes (--for=complete) or completes with its SLOs met (--for=slo)",
		Long: `Wait until a run completes (--for=complete, the default) or completes with
every SLO met (--for=slo).

Exit codes: 0 complete (and, for slo, SLOMet True); 1 error (not found, API);
2 the run failed; 3 the run completed but SLOMet is not True (NotMet,
NotMeasurable, or no objectives); 4 --timeout passed first.

--timeout 0 checks once without waiting; a negative timeout waits forever.`,
		Example: `  kubectl storagebench wait oltp -n storagebench --for=complete --timeout=2h
  kubectl storagebench wait oltp -n storagebench --for=slo --timeout=2h || echo "exit $?"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if forWhat != "complete" && forWhat != "slo" {
				return fmt.Errorf("--for must be complete or slo, not %q", forWhat)
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			var verdict *codeError
			var last *v1alpha1.StorageBenchmark
			err := a.follow(ctx, args[0], 0, func(sb *v1alpha1.StorageBenchmark) (bool, error) {
				last = sb
				done, v := waitVerdict(sb, forWhat)
				if done {
					verdict = v
				}
				return done || timeout == 0, nil
			})
			if verdict == nil {
				if err != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return err
				}
				state := "not finished"
				if last != nil {
					p := apireport.ProgressOf(last, a.now())
					state = fmt.Sprintf("%s, %d/%d steps", p.Phase, p.Finished, p.Planned)
				}
				return &codeError{code: exitTimeout, err: fmt.Errorf("timed out waiting for storagebenchmark %s (--for=%s): %s", args[0], forWhat, state)}
			}
			if verdict.code == exitOK {
				fmt.Fprintln(a.out, report.SafeLine(fmt.Sprintf("storagebenchmark.storagebench.io/%s %s", args[0], verdict.err)))
				return nil
			}
			return verdict
		},
	}
	cmd.Flags().StringVar(&forWhat, "for", "complete", "What to wait for: complete (the Complete condition) or slo (Complete and SLOMet True).")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "How long to wait; 0 checks once, negative waits forever.")
	return cmd
}

// waitVerdict says whether wait is over for a benchmark and with which
// code; for exitOK, err carries the success message.
func waitVerdict(sb *v1alpha1.StorageBenchmark, forWhat string) (bool, *codeError) {
	switch apireport.StateOf(sb) {
	case report.StateFailed:
		return true, &codeError{code: exitFailed, err: fmt.Errorf("storagebenchmark %s failed: %s", sb.Name, apireport.FailureMessage(sb))}
	case report.StateComplete:
		if forWhat != "slo" {
			return true, &codeError{code: exitOK, err: errors.New("complete")}
		}
		status, reason, msg := apireport.SLOState(sb)
		switch status {
		case "True":
			return true, &codeError{code: exitOK, err: fmt.Errorf("complete, SLOs met (%s)", reason)}
		case "":
			return true, &codeError{code: exitSLONotMet, err: fmt.Errorf("storagebenchmark %s completed but has no SLO objectives (no SLOMet condition)", sb.Name)}
		default:
			return true, &codeError{code: exitSLONotMet, err: fmt.Errorf("storagebenchmark %s completed but its SLOs were not met: %s: %s", sb.Name, reason, msg)}
		}
	}
	return false, nil
}

// outputFlags are report's and compare's -o, --file, --latency and size.
type outputFlags struct {
	output, file, latency, operation string
	width, height                    int
}

func (o *outputFlags) bind(cmd *cobra.Command, formats []report.Format, def report.Format, withOperation bool) {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", fmt.Sprintf("Output format: %s (default %s, or from --file's extension).", strings.Join(names, "|"), def))
	cmd.Flags().StringVar(&o.file, "file", "", "Write to this file instead of standard output (md also writes the figure beside it, as FILE's name with .png).")
	cmd.Flags().StringVar(&o.latency, "latency", "", "Latency plotted: mean, p50, p90, p99 or p99.9 (default the benchmark's analysis.targetLatency metric).")
	if withOperation {
		cmd.Flags().StringVar(&o.operation, "operation", "", "Operation plotted: read, write, total, worst or sync (default the first benchmark's analysis.targetLatency operation).")
	}
	cmd.Flags().IntVar(&o.width, "width", report.DefaultWidth, "Image width in pixels (png; svg in the same proportions).")
	cmd.Flags().IntVar(&o.height, "height", report.DefaultHeight, "Image height in pixels.")
}

// resolve checks the flags: the format, and the rendering options.
func (o *outputFlags) resolve(formats []report.Format, def report.Format) (report.Format, report.Options, error) {
	name := o.output
	if name == "" && o.file != "" {
		name = strings.TrimPrefix(filepath.Ext(o.file), ".")
		if name == "markdown" {
			name = "md"
		}
		if _, err := report.ParseFormat(name, formats...); err != nil {
			name = ""
		}
	}
	if name == "" {
		name = string(def)
	}
	f, err := report.ParseFormat(name, formats...)
	if err != nil {
		return "", report.Options{}, err
	}
	opts := report.Options{Metric: o.latency, Operation: o.operation, Width: o.width, Height: o.height}
	if o.width <= 0 || o.height <= 0 || o.width > 10000 || o.height > 10000 {
		return "", opts, fmt.Errorf("--width and --height must be 1 to 10000 pixels")
	}
	if err := report.CheckSelector(analysis.LatencySelector{Metric: o.latency}); err != nil {
		return "", opts, fmt.Errorf("--latency: %w", err)
	}
	if err := report.CheckSelector(analysis.LatencySelector{Operation: o.operation}); err != nil {
		return "", opts, fmt.Errorf("--operation: %w", err)
	}
	return f, opts, nil
}

// emit renders into --file or standard output. For Markdown written to a
// file, the figure goes beside it as a PNG that the Markdown references.
// The formats for people (text, md, html, svg) are written as
// report.SafeText escapes them: they quote benchmarks' text, and terminals
// show them; JSON is data, escaped by encoding/json, and PNG an image.
func (a *app) emit(o *outputFlags, f report.Format, opts report.Options, render func(io.Writer, report.Options) error, png func(report.Options) ([]byte, error)) error {
	if forPeople(f) {
		inner := render
		render = func(w io.Writer, opts report.Options) error {
			var b bytes.Buffer
			if err := inner(&b, opts); err != nil {
				return err
			}
			_, err := io.WriteString(w, report.SafeText(b.String()))
			return err
		}
	}
	if o.file == "" {
		if f == report.FormatPNG && isTerminal(a.out) {
			return errors.New("refusing to write a PNG to a terminal: use --file or redirect standard output")
		}
		return render(a.out, opts)
	}
	if f == report.FormatMarkdown {
		img := strings.TrimSuffix(o.file, filepath.Ext(o.file)) + ".png"
		b, err := png(opts)
		if err != nil {
			return err
		}
		if err := os.WriteFile(img, b, 0o644); err != nil {
			return err
		}
		opts.ImageRef = filepath.Base(img)
		fmt.Fprintf(a.errOut, "wrote %s\n", img)
	}
	var b bytes.Buffer
	if err := render(&b, opts); err != nil {
		return err
	}
	if err := os.WriteFile(o.file, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.errOut, "wrote %s\n", o.file)
	return nil
}

// forPeople reports whether emit escapes a format's output
// (report.SafeText).
func forPeople(f report.Format) bool {
	switch f {
	case report.FormatText, report.FormatMarkdown, report.FormatHTML, report.FormatSVG:
		return true
	}
	return false
}

var reportFormats = []report.Format{report.FormatMarkdown, report.FormatHTML, report.FormatSVG, report.FormatPNG, report.FormatJSON}

func (a *app) reportCommand() *cobra.Command {
	var o outputFlags
	var timeline int
	cmd := &cobra.Command{
		Use:   "report NAME | report sbsched/NAME | report sbops/NAME",
		Short: "Render the ops–latency curve and the step table (md, html, svg, png or json), a schedule's history of runs, or a VolumeOperationsBenchmark's latency against concurrency",
		Long: `Render a run's ops–latency curve: achieved load on x (IOPS, or MiB/s when the
load is offered in MiBps), latency in ms on y, one point per step, a read and
a write series, the latency target as a horizontal line, the knee ringed and
saturated steps crossed; with the step table and summary for md and html.

md written to --file puts the figure beside it (FILE.png) and references it;
md on standard output embeds the PNG as a data URI. html is a standalone
page with the figure as inline SVG and, after the summary, each step's
timeline (as --timeline draws it) from the step's ConfigMap; a step without
one gets a line saying why, and saved objects without ConfigMaps a note.

report sbsched/NAME (or schedule/NAME, storagebenchmarkschedule/NAME) draws
a StorageBenchmarkSchedule's kept runs along their scheduled times instead:
the peak IOPS and the IOPS at the latency target of each, a failed run
crossed at zero and a regressed run ringed; png, svg, md (the figure and a
row per run) or json (the runs as status.history holds them). It reads the
cluster, not --from-file.

` + operationsReportHelp,
		Example: `  kubectl storagebench report oltp -n storagebench -o html --file oltp.html
  kubectl storagebench report oltp -o md --file oltp.md      # writes oltp.md and oltp.png
  kubectl storagebench report oltp --latency p99 --file oltp-p99.png
  kubectl storagebench report --from-file run.yaml -o json
  kubectl storagebench report oltp --timeline 3 --file oltp-step3.png
  kubectl storagebench report sbsched/oltp-nightly -n storagebench --file nightly.png
  kubectl storagebench report sbops/serial --from-file ops.yaml -o png --file ops.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name := splitRef(argOr(args))
			switch kindOf(kind) {
			case kindBenchmark:
			case kindSchedule:
				if err := notWith(cmd, "a schedule's history (it draws the runs' peak IOPS and IOPS at the latency target)", "timeline", "latency"); err != nil {
					return err
				}
				return a.scheduleReport(cmd.Context(), &o, name)
			case kindOperations:
				return a.operationsReport(cmd, &o, name)
			default:
				return fmt.Errorf("report draws a storagebenchmark (NAME), a storagebenchmarkschedule's history (sbsched/NAME) or a volumeoperationsbenchmark (sbops/NAME), not %q", argOr(args))
			}
			if timeline > 0 {
				return a.timeline(cmd.Context(), &o, name, timeline)
			}
			f, opts, err := o.resolve(reportFormats, report.FormatMarkdown)
			if err != nil {
				return err
			}
			sb, err := a.get(cmd.Context(), name)
			if err != nil {
				return err
			}
			r := apireport.FromAPI(sb)
			var tl *report.Timelines
			if f == report.FormatHTML {
				tl = a.timelines(cmd.Context(), sb)
			}
			return a.emit(&o, f, opts,
				func(w io.Writer, opts report.Options) error {
					switch f {
					case report.FormatJSON:
						return apireport.WriteDocument(w, sb, opts)
					case report.FormatHTML:
						return figure.HTML(w, r, opts, tl)
					}
					return figure.Render(w, r, f, opts)
				},
				func(opts report.Options) ([]byte, error) { return figure.PNG(r, opts) })
		},
	}
	o.bind(cmd, reportFormats, report.FormatMarkdown, false)
	cmd.Flags().IntVar(&timeline, "timeline", 0, "Draw step N's timeline instead (from 1): IOPS and p99 latency second by second, its longest stall shaded; png or svg. Read from the step's ConfigMap (with --from-file, save it too: kubectl get sbench,cm -o yaml).")
	return cmd
}

var timelineFormats = []report.Format{report.FormatPNG, report.FormatSVG}

// timeline draws one step's timeline from its ConfigMap.
func (a *app) timeline(ctx context.Context, o *outputFlags, name string, step int) error {
	f, opts, err := o.resolve(timelineFormats, report.FormatPNG)
	if err != nil {
		return fmt.Errorf("--timeline draws a figure: %w", err)
	}
	sb, err := a.get(ctx, name)
	if err != nil {
		return err
	}
	cm, err := a.stepConfigMap(ctx, sb, step-1)
	if err != nil {
		return err
	}
	if cm == nil {
		err := a.noRecord(sb, step-1)
		if !a.fromFile() {
			err = fmt.Errorf("%w: has it finished?", err)
		}
		return err
	}
	t, err := apireport.StepTimeline(sb, cm, step-1)
	if err != nil {
		return err
	}
	png := func(opts report.Options) ([]byte, error) { return figure.TimelinePNG(t, opts) }
	return a.emit(o, f, opts, func(w io.Writer, opts report.Options) error {
		var b []byte
		var err error
		if f == report.FormatSVG {
			b, err = figure.TimelineSVG(t, opts)
		} else {
			b, err = png(opts)
		}
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}, png)
}

// timelines reads the timelines of a benchmark's finished steps for the
// HTML report, each step's ConfigMap once. A step without one gets the
// reason; when none can be read (saved objects without ConfigMaps, or an
// API error other than not found), the report notes that instead.
func (a *app) timelines(ctx context.Context, sb *v1alpha1.StorageBenchmark) *report.Timelines {
	tl := &report.Timelines{ByStep: map[int]report.StepTimeline{}, Missing: map[int]string{}}
	where := "namespace " + sb.Namespace
	if a.fromFile() {
		where = strings.Join(a.fromFiles, ", ")
		if saved, err := a.load(); err == nil && len(saved.configMaps) == 0 {
			return &report.Timelines{Unavailable: fmt.Sprintf("%s holds no ConfigMaps (save the steps' ConfigMaps with the benchmark: kubectl get sbench,cm -o yaml)", where)}
		}
	}
	for _, s := range sb.Status.Steps {
		k := int(s.Index)
		cm, err := a.stepConfigMap(ctx, sb, k)
		if err != nil {
			return &report.Timelines{Unavailable: fmt.Sprintf("reading ConfigMap %s: %v", exchange.StepName(sb.Name, k), err)}
		}
		if cm == nil {
			tl.Missing[k] = fmt.Sprintf("ConfigMap %s not found in %s", exchange.StepName(sb.Name, k), where)
			continue
		}
		t, err := apireport.StepTimeline(sb, cm, k)
		if err != nil {
			tl.Missing[k] = err.Error()
			continue
		}
		tl.ByStep[k] = t
	}
	return tl
}

var compareFormats = []report.Format{report.FormatText, report.FormatMarkdown, report.FormatHTML, report.FormatSVG, report.FormatPNG}

func (a *app) compareCommand() *cobra.Command {
	var o outputFlags
	var r regressionFlags
	cmd := &cobra.Command{
		Use:   "compare NAME NAME... | compare NAME --baseline BASE[,BASE...]",
		Short: "Overlay the curves of several runs and tabulate their deltas, or judge a run against baseline runs step by step (--baseline)",
		Long: `Overlay the ops–latency curves of several runs, one series per benchmark, and
tabulate each one's peak and performance at the latency target with the
change relative to the first benchmark.

All runs are judged on the same latency figure (--latency, --operation;
default the first benchmark's analysis.targetLatency), the same load unit
and the first benchmark's latency target, recomputed from their steps.

With --baseline BASE[,BASE...], judge one run against baseline runs as the
operator's spec.regression does: each step's IOPS and p99 latency (the
medians of its per-second samples, read from the steps' ConfigMaps) against
the same step of every baseline run. With 3 or more baseline runs, a
one-sided prediction test on the log scale judges the change against the
runs' spread; with 1 or 2, IOPS are judged by a one-sided Mann–Whitney test
of the per-second samples and p99 is not judged; p99 is judged only where
the baseline's latency was open-loop. The p-values are Holm-adjusted over
all the tests. BASE is a completed benchmark (up to 20, comma-separated or
the flag repeated) or configmap/NAME, a pinned baseline of one or several
runs (see the baseline command). The options are NAME's spec.regression, else
the defaults; --significance, --min-iops-drop and --min-p99-rise override
them. Runs that measured another workload, clients or load are refused
unless --force. Prints a row per test and the verdict (-o text), or the
comparison as JSON (-o json); exits 5 when NAME regressed.`,
		Example: `  kubectl storagebench compare oltp-ontap-nas oltp-ontap-san -n storagebench
  kubectl storagebench compare oltp-a oltp-b -o png --file compare.png
  kubectl storagebench compare -f a.yaml -f b.yaml -o md --file compare.md
  kubectl storagebench compare oltp-friday --baseline oltp-monday,oltp-tuesday,oltp-wednesday -n storagebench
  kubectl storagebench compare oltp-tuesday --baseline configmap/oltp-golden --min-iops-drop 5 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if r.baseline != "" {
				return a.compareWithBaseline(cmd, &o, &r, args)
			}
			if err := notWith(cmd, "compare without --baseline", regressionOnly...); err != nil {
				return err
			}
			f, opts, err := o.resolve(compareFormats, report.FormatText)
			if err != nil {
				return err
			}
			if !a.fromFile() && len(args) < 2 {
				return errors.New("compare needs at least two benchmarks")
			}
			sbs, err := a.getAll(cmd.Context(), args)
			if err != nil {
				return err
			}
			if len(sbs) < 2 {
				return fmt.Errorf("compare needs at least two benchmarks, got %d", len(sbs))
			}
			c, err := apireport.Compare(sbs, opts)
			if err != nil {
				return err
			}
			return a.emit(&o, f, opts,
				func(w io.Writer, opts report.Options) error { return figure.RenderComparison(w, c, f, opts) },
				func(opts report.Options) ([]byte, error) { return figure.ComparisonPNG(c, opts) })
		},
	}
	o.bind(cmd, compareFormats, report.FormatText, true)
	cmd.Flags().Lookup("output").Usage = "Output format: text|md|html|svg|png, with --baseline text|json (default text, or from --file's extension)."
	r.bind(cmd)
	return cmd
}
