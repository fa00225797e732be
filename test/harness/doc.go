// Package harness runs integration tests against a real Kubernetes control
// plane on one machine, without a container runtime.
//
// Start brings up etcd and kube-apiserver (controller-runtime's envtest) and
// a real kube-controller-manager, so Jobs really create pods, the garbage
// collector really deletes them and the persistentvolume-binder really binds
// claims. Two stand-ins complete it, and nothing else is faked:
//
//   - Kubelet plays the scheduler and the kubelet of one Node: it binds
//     pending pods to its node once their claims are bound, runs each pod's
//     single container as a local process (the real command, in a private
//     mount namespace where the pod's volumes, service-account token and
//     termination-message file appear at the paths the pod spec names), and
//     reports the pod's status from the process's life and exit code.
//   - Provisioner plays an external dynamic provisioner: it provisions
//     hostPath volumes (a directory, or a loop device for volumeMode Block)
//     for claims whose StorageClass names it, and deletes them when released.
//
// The API server runs with the ServiceAccount admission plugin enabled (envtest
// disables it by default), so pods get the projected kube-api-access volume a
// real cluster gives them, and a process inside a pod talks to the API server
// with rest.InClusterConfig() under its own ServiceAccount and RBAC.
//
// Use from a Ginkgo suite (one Cluster per suite, one namespace per spec):
//
//	var cluster *harness.Cluster
//
//	var _ = BeforeSuite(func() {
//		var err error
//		cluster, err = harness.Start(harness.Options{
//			CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
//			Scheme:            scheme, // client-go's plus the project's API
//			Executables:       map[string]string{"/usr/local/bin/runner": runnerBinary},
//			Logger:            GinkgoLogr,
//		})
//		Expect(err).NotTo(HaveOccurred())
//		DeferCleanup(cluster.Stop)
//	})
//
//	var _ = AfterEach(func() {
//		if CurrentSpecReport().Failed() {
//			cluster.Dump(GinkgoWriter)
//		}
//	})
//
// Everything needs root (mount namespaces, bind mounts, loop devices) and the
// binaries that `make k8s-binaries` builds (see internal/testenv).
package harness
