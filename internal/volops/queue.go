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

// Run is one operations benchmark as the queue sees it: its namespace and
// name, its StorageClass, when it was created, and whether it
// runs (started and not ended). Ended runs are not given to the queue.
type Run struct {
	Namespace, Name string
	Class           string
	Created         time.Time
	Running         bool
}

// key orders runs created in the same instant.
func (r Run) key() string { return r.Namespace + "/" + r.Name }

// seenBy is how run r is named to the owner of w: by name in w's
// namespace, and only as a run of another namespace outside it, so that
// a queued run's message tells no tenant of another's names.
func (r Run) seenBy(w Run) string {
	if r.Namespace == w.Namespace {
		return r.Name
	}
	return "a run of another namespace"
}

// Admit says whether the waiting run w may start beside the others: fewer
// than maxRunning run, none runs on w's class (two runs on one class time
// each other's operations: the provisioner, the driver and the array are
// shared), and no run that waits longer (created earlier; by key when
// created in the same instant) could start now, so that no run waits for
// ever. When it may not, why says what it waits for.
func Admit(w Run, others []Run, maxRunning int) (ok bool, why string) {
	running := 0
	busy := map[string]Run{}
	for _, o := range others {
		if o.Running {
			running++
			busy[o.Class] = o
		}
	}
	if running >= maxRunning {
		return false, fmt.Sprintf("%d operations benchmarks run, the most at once", running)
	}
	if o, ok := busy[w.Class]; ok {
		return false, fmt.Sprintf("%s runs on StorageClass %s", o.seenBy(w), w.Class)
	}
	waiting := slices.DeleteFunc(slices.Clone(others), func(o Run) bool { return o.Running || o.key() == w.key() })
	slices.SortFunc(waiting, func(a, b Run) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.key(), b.key()))
	})
	for _, o := range waiting {
		if cmp.Or(o.Created.Compare(w.Created), cmp.Compare(o.key(), w.key())) >= 0 {
			break
		}
		if _, taken := busy[o.Class]; !taken {
			return false, fmt.Sprintf("%s waits longer", o.seenBy(w))
		}
	}
	return true, ""
}
