// Command kubectl-storagebench is the storagebench kubectl plugin: on PATH
// it runs as `kubectl storagebench`. It lists benchmarks, prints a run's
// steps and summary, follows a run, waits for it (exit codes for CI) and
// renders the ops–latency curve as Markdown, HTML, SVG, PNG or JSON, alone
// or compared with other runs. See docs/kubectl-plugin.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
