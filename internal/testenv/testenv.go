// Package testenv locates the Kubernetes binaries (etcd, kube-apiserver,
// kube-controller-manager, kubectl) that integration tests run for real.
// They are built from the Go module proxy by `make k8s-binaries`
// (hack/k8s-binaries.sh) into a cache outside the clone, keyed by version.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/storagebench/storagebench/api/v1alpha1"
)

// KubernetesVersion is the version of the binaries the tests run; it must
// match hack/k8s-bin/go.mod.
const KubernetesVersion = "v1.33.13"

// AssetsDir returns the directory holding the binaries: $KUBEBUILDER_ASSETS
// when set, else the default cache directory. It fails, naming the make
// target that builds them, when kube-apiserver or etcd is missing there.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cache := os.Getenv("STORAGEBENCH_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("locating the binary cache: %w", err)
			}
			cache = filepath.Join(home, ".cache", "storagebench")
		}
		dir = filepath.Join(cache, "k8s", KubernetesVersion)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make k8s-binaries` (or set KUBEBUILDER_ASSETS): %w", bin, dir, err)
		}
	}
	return dir, nil
}

// Start starts etcd and kube-apiserver from AssetsDir with the CRDs of
// crdDir installed, and returns the environment (the caller stops it) and
// a client that knows client-go's types and storagebench's.
func Start(crdDir string) (*envtest.Environment, client.Client, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{BinaryAssetsDirectory: dir, CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the API server and installing the CRDs: %w", err)
	}
	scheme := runtime.NewScheme()
	err = clientgoscheme.AddToScheme(scheme)
	if err == nil {
		err = v1alpha1.AddToScheme(scheme)
	}
	var k8s client.Client
	if err == nil {
		k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	}
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, k8s, nil
}
