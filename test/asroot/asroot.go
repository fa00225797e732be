// Package asroot lets a test that must be root (it mounts file systems)
// run as any user: it runs again, alone, as root of a user and mount
// namespace of its own (unshare(1), unprivileged user namespaces), so
// `make unit` needs no root.
package asroot

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Rerun runs the calling test again as root of a new user and mount
// namespace when the test process is not root, and reports whether it did:
// the caller then returns, its verdict given. As root it returns false and
// the caller goes on. The test fails when it fails in the namespace, or
// did not pass there (the namespace cannot be made, or the test was not
// run).
func Rerun(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return false
	}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a user and mount namespace of its own: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in a user and mount namespace of its own did not pass there:\n%s", t.Name(), out)
	}
	return true
}
