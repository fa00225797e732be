package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// newManager returns a controller-runtime manager without metrics or health
// endpoints whose controllers may share names with other managers in this
// process (one Kubelet per Cluster, several Clusters per process).
func newManager(cfg *rest.Config, log logr.Logger) (manager.Manager, error) {
	return manager.New(cfg, manager.Options{
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
}

// runner runs a manager until stopped.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// run starts mgr and waits until its caches have synced.
func run(mgr manager.Manager) (*runner, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = mgr.Start(ctx)
	}()
	syncCtx, cancelSync := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSync()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		return nil, errors.Join(errors.New("caches did not sync"), r.stop())
	}
	return r, nil
}

func (r *runner) stop() error {
	r.cancel()
	<-r.done
	if r.err != nil {
		return fmt.Errorf("manager: %w", r.err)
	}
	return nil
}
