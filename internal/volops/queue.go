package volops

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// DefaultMaxRunning is how many operations benchmarks may run at once in
// the manager's scope unless its flag says otherwise. With at most
// MaxObjects objects alive per run, it bounds what they make at once.
const DefaultMaxRunning = 2

// Run is one operations benchmark as the queue sees it: its key
// (namespace/name), its StorageClass, when it was created, and whether it
// runs (started and not ended). Ended runs are not given to the queue.
type Run struct {
	Key     string
	Class   string
	Created time.Time
	Running bool
}

// Admit says whether the waiting run w may start beside the others: fewer
// than maxRunning run, none runs on w's class (two runs on one class time
// each other's operations: the provisioner, the driver and the array are
// shared), and no run that waits longer (created earlier; by key when
// created in the same instant) could start now, so that no run waits for
// ever. When it may not, why says what it waits for.
func Admit(w Run, others []Run, maxRunning int) (ok bool, why string) {
	running := 0
	busy := map[string]string{}
	for _, o := range others {
		if o.Running {
			running++
			busy[o.Class] = o.Key
		}
	}
	if running >= maxRunning {
		return false, fmt.Sprintf("%d operations benchmarks run, the most at once", running)
	}
	if k, ok := busy[w.Class]; ok {
		return false, fmt.Sprintf("%s runs on StorageClass %s", k, w.Class)
	}
	waiting := slices.DeleteFunc(slices.Clone(others), func(o Run) bool { return o.Running || o.Key == w.Key })
	slices.SortFunc(waiting, func(a, b Run) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Key, b.Key))
	})
	for _, o := range waiting {
		if cmp.Or(o.Created.Compare(w.Created), cmp.Compare(o.Key, w.Key)) >= 0 {
			break
		}
		if _, taken := busy[o.Class]; !taken {
			return false, fmt.Sprintf("%s waits longer", o.Key)
		}
	}
	return true, ""
}
