package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// dump writes what the cluster says about a failed spec to
// _work/e2e/dumps/<spec>/ and prints the directory and the most telling
// parts: objects, events, the benchmarks described, the manager's logs (and
// its previous container's), every pod log of the suite's namespaces, and
// the tail of each cluster component's log.
func dump(r SpecReport) {
	dir := filepath.Join(root, "_work", "e2e", "dumps", slug(r.FullText()))
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "pods"), 0o755); err != nil {
		GinkgoWriter.Printf("dump: %v\n", err)
		return
	}
	save := func(name string, args ...string) string {
		out, errOut, err := kubectl("", args...)
		if err != nil {
			out += "\n" + errOut + "\n" + err.Error()
		}
		_ = os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644)
		return out
	}
	save("objects.txt", "get", "storagebenchmarks,pods,jobs,pvc,configmaps,services,endpoints", "-A", "-o", "wide")
	save("cluster.txt", "get", "nodes,pv,storageclasses", "-o", "wide")
	events := save("events.txt", "get", "events", "-A", "--sort-by=.lastTimestamp")
	save("benchmarks.txt", "describe", "storagebenchmarks", "-A")
	manager := save("manager.log", "-n", systemNS, "logs", "deploy/"+managerDeploy, "--all-containers", "--tail=-1")
	save("manager-previous.log", "-n", systemNS, "logs", "deploy/"+managerDeploy, "--all-containers", "--previous", "--tail=-1")
	pods, _, _ := kubectl("", "get", "pods", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name}{\"\\n\"}{end}")
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		ns, name, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(ns, "e2e-") {
			save(filepath.Join("pods", ns+"_"+name+".log"), "-n", ns, "logs", name, "--all-containers", "--tail=-1")
		}
	}
	// Every component's log, the extra nodes' (logs/nK/) too.
	logs := filepath.Join(clusterDir(), "logs")
	_ = filepath.WalkDir(logs, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(logs, path)
		if data, err := os.ReadFile(path); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "component-"+strings.ReplaceAll(rel, "/", "-")), []byte(tail(string(data), 400)), 0o644)
		}
		return nil
	})
	GinkgoWriter.Printf("\n==== dumped to %s\n==== events (last 30)\n%s\n==== manager log (last 60)\n%s\n",
		dir, tail(events, 30), tail(manager, 60))
}

// clusterDir is hack/cluster's work directory.
func clusterDir() string {
	if d := os.Getenv("STORAGEBENCH_CLUSTER_DIR"); d != "" {
		if !filepath.IsAbs(d) { // as hack/cluster/lib.sh resolves it
			d = filepath.Join(root, d)
		}
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "storagebench", "cluster")
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(nonWord.ReplaceAllString(s, "-"), "-")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
