// Package testenv locates the Kubernetes binaries (etcd, kube-apiserver,
// kube-controller-manager, kubectl) that integration tests run for real.
// They are built from the Go module proxy by `make k8s-binaries`
// (hack/k8s-binaries.sh) into a cache outside the clone, keyed by version.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
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
