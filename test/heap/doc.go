// Package heap measures the storagebench manager on a real kube-apiserver
// and etcd (envtest, from `make k8s-binaries`): its cost per step at 10,
// 100 and 1,000 clients (BenchmarkManagerPerStep, in make bench), and its
// peak heap in cases that must each stay under 512 MiB:
//
//   - 1000clients: one StorageBenchmark of 1,000 PerClient clients × 20 rate
//     steps of the minimum step duration, run to completion;
//   - 1000foreignConfigMaps: 1,000 ConfigMaps of 1 MB that are not the
//     operator's but carry its labels (managed-by, benchmark, role=client)
//     exist in the namespace before the manager starts; then a benchmark of
//     3 clients × 3 steps runs to completion there;
//   - ended runs (BenchmarkManagerHeapEnded): the manager started afresh
//     among one real ended run of 3 clients × 10 steps and 0, 100 and 400
//     copies of it (the benchmark with its status, its plan and step
//     ConfigMaps): what each ended run costs, beside what its step records
//     would; the copies must come out untouched and no step record held.
//
// Nothing is mocked on the API side. Only the kubelet and the storage are
// absent: the benchmark binds each claim itself (a PersistentVolume
// pre-bound to it, and the claim's status set Bound), no pod ever runs, and
// fake runners in the benchmark process play each client's side of the
// protocol (internal/exchange.Client, as the real runner uses it: plan,
// ready.json, wait for each order, its result in the wire encoding the
// plan offers) with a real fio json+ result (internal/results/testdata)
// instead of running fio.
//
// The manager (manager.New, as cmd/manager builds it) runs in a
// subprocess, the test binary re-executed, so that its heap is measured
// alone: it samples runtime/metrics every 50 ms and reports its peak heap
// (/memory/classes/heap/objects:bytes, live and not yet swept objects) and
// its peak live heap after GC (/gc/heap/live:bytes). It sets the
// garbage collector's target as cmd/manager does (manager.TuneGC), and no
// GOMEMLIMIT (unless the environment sets one), so the figures are those
// of an unconstrained manager as it ships. The benchmark fails when a peak heap
// exceeds 512 MiB or a run does not complete within its bound.
//
// Run it (a few minutes; it needs more than go test's default timeout):
//
//	go test -run '^$' -bench . -benchtime 1x -timeout 30m ./test/heap/
package heap
